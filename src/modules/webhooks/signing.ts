import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` and the base64 of the HMAC key. */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_MIN_LENGTH = 24;
const SECRET_MAX_LENGTH = 256;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A new secret: 24 random bytes (192 bits), as receivers' Standard Webhooks libraries expect it. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/**
 * A secret chosen by the user, in the stored form (`whsec_` + base64), or the reason it is refused.
 * At least 24 characters (after the prefix, when there is one), at most 256:
 * - `whsec_` + base64, or bare base64: the key is the decoded bytes (as Standard Webhooks libraries read it);
 * - any other text: the key is its UTF-8 bytes (what `new Webhook(secret, { format: 'raw' })` of the
 *   standardwebhooks library uses), stored and returned base64-encoded behind `whsec_`.
 */
export function normalizeSecret(input: string): { secret: string } | { problem: string } {
  const prefixed = input.startsWith(SECRET_PREFIX);
  const text = prefixed ? input.slice(SECRET_PREFIX.length) : input;
  if (text.length < SECRET_MIN_LENGTH) {
    return { problem: prefixed ? `Secret should have at least ${SECRET_MIN_LENGTH} characters of base64 after "${SECRET_PREFIX}"` : `Secret should have at least ${SECRET_MIN_LENGTH} characters` };
  }
  if (text.length > SECRET_MAX_LENGTH) return { problem: `Secret should have at most ${SECRET_MAX_LENGTH} characters` };
  if (BASE64.test(text)) return { secret: SECRET_PREFIX + text };
  if (prefixed) return { problem: `Secret should be "${SECRET_PREFIX}" followed by base64 text` };
  return { secret: SECRET_PREFIX + Buffer.from(text, 'utf8').toString('base64') };
}

/** The `webhook-signature` header value: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`. */
export function sign(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const digest = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${digest}`;
}

/** The three Standard Webhooks headers of one delivery attempt. */
export function signedHeaders(secret: string, messageId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(secret, messageId, timestamp, body),
  };
}
