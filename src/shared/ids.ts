import { randomBytes } from 'node:crypto';

let lastMillis = 0;
let sequence = 0;

/**
 * UUID version 7 (RFC 9562): time-ordered, so "newest first" sorts by id as a tie-breaker within the
 * same millisecond. A 12-bit counter keeps ids from one process strictly increasing.
 */
export function uuidv7(now = Date.now()): string {
  if (now <= lastMillis) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMillis += 1; // counter exhausted: borrow the next millisecond
    now = lastMillis;
  } else {
    lastMillis = now;
    sequence = randomBytes(2).readUInt16BE() & 0x3ff; // random start, room to count up
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
