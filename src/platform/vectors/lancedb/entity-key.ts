/**
 * A 64-bit key of a chunk's entity (its connection and entity ids), stored beside each chunk in the
 * `entity_key` column so that rankings read fixed-width columns to group their candidates into
 * documents, not the chunk id strings (hybrid at 100,000 chunks: the three candidate searches about
 * 3 ms of CPU less a query). Two 32-bit MurmurHash3 mixes of different seeds: two entities of one
 * collection share a key with a probability of about n²/2⁶⁵ (3·10⁻⁸ at a million entities), and then
 * rank as one document.
 */
export function entityKeyOf(sourceConnectionId: string, entityId: string): bigint {
  // The connection id's length first: no two (connection, entity) pairs give the same text.
  const text = `${sourceConnectionId.length}:${sourceConnectionId}${entityId}`;
  return BigInt.asIntN(64, (BigInt(hash32(text, 0x9747b28c)) << 32n) | BigInt(hash32(text, 0x5bd1e995)));
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
