import { randomBytes } from 'node:crypto';

let lastMillis = 0;
let sequence = 0;

/**
 * Random bytes drawn 4 KiB at a time: a sync makes an id per entity row, and one `randomBytes` call per
 * id cost 0.17–0.32 s of CPU per 20,000 entities (bench:sync profile).
 */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

function randomBlock(size: number): Buffer {
  if (randomOffset + size > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomOffset = 0;
  }
  const block = Buffer.allocUnsafe(size);
  randomPool.copy(block, 0, randomOffset, randomOffset + size);
  randomOffset += size;
  return block;
}

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
    sequence = randomBlock(2).readUInt16BE() & 0x3ff; // random start, room to count up
  }
  const bytes = randomBlock(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
