import type { Response } from 'undici';

/**
 * A response's body, or null when it is larger than `maxBytes` (declared or counted): the rest is
 * then not read, and the connection is released. Every client that reads what a server a user names
 * sends (sources, token endpoints) reads through it, so no answer can fill the memory; the raw data store
 * reads its operator's own endpoint whole.
 */
export async function readCappedBody(response: Pick<Response, 'headers' | 'body'>, maxBytes: number): Promise<Buffer | null> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return null;
  }
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of response.body ?? []) {
    size += part.length;
    if (size > maxBytes) {
      await response.body?.cancel().catch(() => {});
      return null;
    }
    parts.push(Buffer.from(part));
  }
  return Buffer.concat(parts);
}
