import type * as lancedb from '@lancedb/lancedb';
import { ValidationError } from '../../../shared/errors.js';
import { type ChunkCandidate, type ChunkRanking, isContainerType } from '../document-ranking.js';
import { compare, finiteOr } from '../filter-conditions.js';
import type { VectorQuery } from '../vector-index.js';
import { ENTITY_KEY_COLUMN } from './arrow.js';
import { isContainerKey } from './entity-key.js';
import { queryRows, type Row } from './rows.js';

/**
 * IVF partitions a query probes of an index of `partitions` (see ivfPartitionsFor in maintenance.ts):
 * 48 × (partitions / 64)^0.875, at most all of them: 48 of 64, 88 of 128, 161 of 256, a share that
 * falls slowly (75 %, 69 %, 63 %) as each partition holds nearer neighbours. (Indexes have 64
 * partitions or more; below, as tests make them, 14 of 16, 4 of 4.)
 *
 * Chosen to keep recall of the exact scan (all partitions) in the top 10 documents at 0.99 or more,
 * with a margin over the fewest that do (80–84 of 128), on the harder of bench:search's corpora, its Zipf-vocabulary text (`--vocabulary zipf`), which needs
 * more probes than the stub's at every size; `npm run bench:probes` sweeps them. At 128 partitions
 * (a shard of 250,000 chunks, Zipf, 600 queries, semantic / hybrid): 68 probes, the square root rule
 * before, 0.981 / 0.986; 76 0.987 / 0.991; 80 0.990 / 0.992; 84 0.992 / 0.994; 88 0.994 / 0.995. A
 * collection of 1,000,000 Zipf chunks in four such shards, 100 queries: 68 0.979 / 0.987 (hybrid p50
 * 184 ms), 80 0.991 / 0.993 (215 ms), 96 0.998 / 0.997 (260 ms); its stub chunks kept 0.99 from 56.
 * At 64 partitions, 100,000 Zipf chunks, 300 queries: 40 probes 0.987, 48 0.995 (stub: 0.999). 256
 * partitions (one table past ~820,000 rows: a shard never is at the default shard size) are measured
 * on the stub alone: 64 probes 0.993 semantic, 96 0.998, 160 1.000 (CPU a query 24, 32, 46 ms); the
 * Zipf text's share there follows the trend above.
 */
export function ivfProbesFor(partitions: number): number {
  return Math.min(partitions, Math.round(48 * (partitions / 64) ** 0.875));
}

/**
 * What a ranking reads of its candidates: enough to rank them as documents, each chunk under a key
 * whose part up to its last colon names its entity (see ChunkCandidate), and whether its entity is a
 * container. The rest of the row is read afterwards for the page alone: every column read for
 * hundreds of candidates costs (texts and JSON were most of a hybrid query's time; the connection and
 * entity id columns alone added about 7 ms to the keyword ranking at 100,000 rows).
 */
export interface CandidateColumns {
  columns: string[];
  chunkKey: (row: Row) => string;
  isContainer: (row: Row) => boolean;
}

/**
 * The current layout: the entity key alone (a fixed-width column, which tells containers too; the
 * searches read it only when the keys kept in memory by row id miss a row, see
 * RankingContext.entityKeys), and the shard and row id (read anyway, for the page) as the chunk's identity:
 * unique per chunk in the versions a search reads, after the last colon, so that a document is its entity
 * in whichever shard. (Should a compaction by another process fall between a query's searches, a chunk
 * listed by both would count as two chunks of its document: the document's score is the same, only
 * which of its chunks shows may differ.)
 */
const KEYED: CandidateColumns = {
  columns: [ENTITY_KEY_COLUMN],
  chunkKey: (row) => `${row[ENTITY_KEY_COLUMN]}:${row[SHARD]}.${row._rowid}`,
  isContainer: (row) => isContainerKey(row[ENTITY_KEY_COLUMN] as bigint),
};
/** Tables made before the entity key column: the chunk id (`chunkIdOf`), which names its entity, and the entity type. */
const BY_CHUNK_ID: CandidateColumns = {
  columns: ['chunk_id', 'entity_type'],
  chunkKey: (row) => String(row.chunk_id),
  isContainer: (row) => isContainerType(String(row.entity_type)),
};

/** What rankings of a table of the current layout (`entityKey`) or of the one before it read of their candidates. */
export function candidateColumns(entityKey: boolean): CandidateColumns {
  return entityKey ? KEYED : BY_CHUNK_ID;
}

/**
 * The shard a candidate's row was read from (its position among the collection's tables), set on each
 * row a search lists: row ids are unique within a table only.
 */
export const SHARD = '_shard';

/** A candidate: its chunk key, its score in its ranking, and its row (`_rowid`, SHARD and the candidate columns). */
type Ranked = ChunkCandidate<Row>;

/** One ranking to compute: which, and its share in the fusion and its scale (see chunkRankings). */
type Leg = { kind: 'semantic' | 'keyword'; weight: number };

/** One shard of the collection a search ranks. */
export interface RankingContext {
  table: lancedb.Table;
  /** Its position among the collection's shards (SHARD). */
  shard: number;
  dimensions: number;
  /**
   * IVF partitions a semantic search probes (`ivfProbesFor` the table's index), or null for an exact
   * scan: a table without the index, or a filter keeping few rows (IVF_FILTER_MIN_SHARE), whose
   * matches may all lie outside the probed partitions (the filter itself narrows the scan).
   */
  ivfProbes: number | null;
  /**
   * Run before a keyword search: counts it for the upkeep (TableMaintenance.beforeKeywordSearch) and
   * makes sure the table has its full-text indexes; says whether the search reads the index alone
   * (too many rows wait for it to scan them).
   */
  beforeKeywordSearch: () => Promise<{ indexedOnly: boolean }>;
  /** What keyword search matches: `fullTextColumns` of the table's layout, one BM25 search each. */
  fullTextColumns: readonly string[];
  /** What its searches read of their candidates: `candidateColumns` of the table's layout. */
  candidates: CandidateColumns;
  /**
   * Tables of the current layout: the entity keys of candidates by row id, from memory
   * (EntityKeyCache), so that the searches read no column; null when one is not known, and the
   * searches run again reading the column.
   */
  entityKeys?: (rowIds: bigint[]) => Promise<BigInt64Array | null>;
}

/** A candidate as its search listed it: its row (`_rowid` and what was read) and its score. */
interface Listed {
  row: Row;
  score: number;
}

/**
 * The chunk rankings of a query over a collection's shards, `depth` candidates each: every shard's
 * best `depth` of each ranking, merged by score (BM25 and cosine as each shard computes them: a
 * shard's BM25 weighs terms by their rarity in the shard, as a search engine's shards do, which
 * shards of one collection, filled in turn by the same sources, share closely). Hybrid weighs two
 * rankings on fixed scales: BM25 divided by the best BM25 of the query (BM25 has no fixed scale: it
 * grows with the query's terms and their rarity), and cosine similarity as it is, clipped at 0
 * (already comparable across queries; stretching it per query, as min-max does, lets a query whose
 * vectors barely separate the candidates reorder the keyword ranking with noise). A single ranking
 * keeps its own scores (BM25, cosine).
 *
 * SciFact train (809 queries, built-in embedder), nDCG@10 against keyword alone (0.690) when this
 * fusion was chosen: min-max per chunk 0.694, min-max per entity 0.698, this 0.700. Reciprocal rank
 * fusion drags BM25 down when vectors are weak (0.60); z-scores (0.696), Rocchio feedback, gated
 * weights and a fitted linear model over ranks and scores did no better: the cap is the embedder.
 *
 * The searches read only the candidate columns of their candidates. (Reading none, then all
 * candidates' columns in one take by row id, was measured too: with LanceDB's caches capped as the
 * service caps them, the searches' own reads cost about as much as the take, and the take added a
 * round trip.)
 */
export async function chunkRankings(shards: readonly RankingContext[], query: VectorQuery, where: string | null, depth: number): Promise<ChunkRanking<Row>[]> {
  const legs = legsOf(query);
  const perShard = await Promise.all(shards.map((context) => shardLists(context, legs, query, where, depth)));
  return legs.map((leg, i) => {
    const lists = perShard.flatMap((shardLegs) => shardLegs[i]!);
    const list = lists.length === 1 ? sortRanked(lists[0]!) : addedPerChunk(lists).slice(0, depth);
    return { candidates: list, weight: leg.weight, value: scale(leg, legs.length, list), cut: list.length >= depth };
  });
}

/** One shard's lists of each leg (a keyword leg lists one per full-text column), its rows marked with their SHARD. */
async function shardLists(context: RankingContext, legs: readonly Leg[], query: VectorQuery, where: string | null, depth: number): Promise<Ranked[][][]> {
  const search = (columns: readonly string[]) =>
    Promise.all(legs.map((leg) => (leg.kind === 'semantic' ? semantic(context, columns, query, where, depth) : keyword(context, columns, query, where, depth))));
  const { entityKeys } = context;
  let perLeg = await search(entityKeys ? [] : context.candidates.columns);
  if (entityKeys && !(await withEntityKeys(entityKeys, perLeg))) perLeg = await search(context.candidates.columns);
  const { chunkKey } = context.candidates;
  return perLeg.map((lists) =>
    lists.map((listed) =>
      listed.map(({ row, score }): Ranked => {
        row[SHARD] = context.shard;
        return { chunkKey: chunkKey(row), score, item: row };
      }),
    ),
  );
}

/** Gives every listed row its entity key (ENTITY_KEY_COLUMN) from `entityKeys`; false when one is not known. */
async function withEntityKeys(entityKeys: (rowIds: bigint[]) => Promise<BigInt64Array | null>, perLeg: Listed[][][]): Promise<boolean> {
  const rows = perLeg.flat(2).map(({ row }) => row);
  const keys = await entityKeys(rows.map((row) => row._rowid as bigint));
  if (!keys) return false;
  rows.forEach((row, i) => (row[ENTITY_KEY_COLUMN] = keys[i]));
  return true;
}

/** The rankings a query asks for; hybrid's keyword weight clamped to 0–1, whose extremes are one ranking, unchanged. */
function legsOf(query: VectorQuery): Leg[] {
  switch (query.strategy) {
    case 'semantic':
      return [{ kind: 'semantic', weight: 1 }];
    case 'keyword':
      return [{ kind: 'keyword', weight: 1 }];
    case 'hybrid': {
      const weight = query.keywordWeight;
      const keywordWeight = typeof weight === 'number' && Number.isFinite(weight) ? Math.min(1, Math.max(0, weight)) : 0.5;
      if (keywordWeight >= 1) return [{ kind: 'keyword', weight: 1 }];
      if (keywordWeight <= 0) return [{ kind: 'semantic', weight: 1 }];
      return [
        { kind: 'keyword', weight: keywordWeight },
        { kind: 'semantic', weight: 1 - keywordWeight },
      ];
    }
    default:
      throw new ValidationError([{ loc: ['retrieval_strategy'], msg: `Unknown retrieval strategy ${String(query.strategy)}`, type: 'enum' }]);
  }
}

/** A ranking's scale in the fusion: its own scores alone; fused, BM25 over the query's best and cosine clipped at 0. */
function scale(leg: Leg, legs: number, list: Ranked[]): (score: number) => number {
  if (legs === 1) return (score) => score;
  if (leg.kind === 'semantic') return (score) => Math.max(0, score);
  const best = list[0]?.score ?? 0;
  return (score) => (best > 0 ? Math.max(0, score) / best : 0);
}

/** One list: the `depth` nearest chunks by cosine similarity. */
async function semantic({ table, dimensions, ivfProbes }: RankingContext, columns: readonly string[], query: VectorQuery, where: string | null, depth: number): Promise<Listed[][]> {
  const vector = query.vector;
  if (!vector) throw new Error(`A ${query.strategy} search needs a query vector`);
  if (vector.length !== dimensions) throw new Error(`Query vector has ${vector.length} dimensions; the index expects ${dimensions}`);
  let search = table.vectorSearch(vector).distanceType('cosine').select([...columns, '_distance']).withRowId().limit(depth);
  search = ivfProbes === null ? search.bypassVectorIndex() : search.nprobes(ivfProbes);
  if (where !== null) search = search.where(where);
  const rows = await queryRows(search, depth);
  // Cosine distance is in [0, 2]; a zero query vector gives NaN distances.
  return [rows.map((row) => ({ row, score: finiteOr(1 - Number(row._distance), -1) }))];
}

/**
 * BM25 over the full-text columns (KEYWORDS_COLUMN; `text` and `name` in tables made before it), one
 * list per column. LanceDB searches the rows not yet in the full-text index too (it scans unindexed
 * fragments unless `fastSearch()` is set), so rows are findable right after add; optimize() folds
 * them into the index so that scan stays small. While too many wait for it (a sync under way, see
 * KEYWORD_SCAN_MAX_UNINDEXED_ROWS), an unfiltered search reads the index alone.
 */
async function keyword(context: RankingContext, columns: readonly string[], query: VectorQuery, where: string | null, depth: number): Promise<Listed[][]> {
  const text = query.text?.trim() ?? '';
  if (text === '') return [];
  const { indexedOnly } = await context.beforeKeywordSearch();
  return Promise.all(
    context.fullTextColumns.map(async (column) => {
      let search = context.table.query().fullTextSearch(text, { columns: column }).select([...columns, '_score']).withRowId().limit(depth);
      if (indexedOnly) search = search.fastSearch();
      if (where !== null) search = search.where(where);
      return (await queryRows(search, depth)).map((row) => ({ row, score: finiteOr(Number(row._score), 0) }));
    }),
  );
}

/**
 * Lists as one: the shards' lists of a ranking, and the per-column keyword lists (tables made before
 * KEYWORDS_COLUMN search `text` and `name`), each chunk's scores added (a chunk is listed by one
 * shard only): what a multi-column match computes, for less (100,000 rows, depth 200,
 * p50 of 120 queries: 17.6 ms for a MultiMatchQuery over both columns, 11.8 ms for the two
 * single-column searches; SciFact nDCG@10 unchanged). A row beyond one column's top `depth` misses
 * that column's share, which only reorders the tail. (A single list, which lists a row once, is
 * only sorted.)
 */
function addedPerChunk(lists: Ranked[][]): Ranked[] {
  const byChunk = new Map<string, Ranked>();
  for (const list of lists) {
    for (const { chunkKey, score, item } of list) {
      const seen = byChunk.get(chunkKey);
      if (seen) seen.score += score;
      else byChunk.set(chunkKey, { chunkKey, score, item });
    }
  }
  return sortRanked([...byChunk.values()]);
}

/** Best first; equal scores in chunk key order, so pages are deterministic. */
function sortRanked(list: Ranked[]): Ranked[] {
  return list.sort((a, b) => b.score - a.score || compare(a.chunkKey, b.chunkKey));
}
