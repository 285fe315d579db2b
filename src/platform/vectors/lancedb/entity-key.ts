/**
 * A 64-bit key of a chunk's entity (its connection and entity ids), stored beside each chunk in the
 * `entity_key` column so that rankings read one fixed-width column to group their candidates into
 * documents and tell containers, not the chunk id strings and the entity type. Its lowest bit says
 * whether the entity is a container (`isContainerType`); the other 63 are two 32-bit MurmurHash3
 * mixes of different seeds: two entities of one collection share a key with a probability of about
 * n²/2⁶⁴ (5·10⁻⁸ at a million entities), and then rank as one document.
 */
export function entityKeyOf(sourceConnectionId: string, entityId: string, container: boolean): bigint {
  // The connection id's length first: no two (connection, entity) pairs give the same text.
  const text = `${sourceConnectionId.length}:${sourceConnectionId}${entityId}`;
  const hash = (BigInt(hash32(text, 0x9747b28c)) << 32n) | BigInt((hash32(text, 0x5bd1e995) & ~1) >>> 0);
  return BigInt.asIntN(64, hash | (container ? 1n : 0n));
}

/** Whether an entity key (`entityKeyOf`) is a container's. */
export function isContainerKey(key: bigint): boolean {
  return (key & 1n) === 1n;
}

function hash32(text: string, seed: number): number {
  let h = seed | 0;
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= text.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
