/**
 * A dataset bench:search built, opened by the benches that measure on it without a server
 * (bench:lancedb, bench:probes): its description, and bench:search's queries for it with their
 * vectors from the built-in embedder.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { WordVectorEmbedder } from '../src/platform/embeddings/word-vector-embedder.js';
import { datasetTextOf, searchQueries } from './search-corpus.js';

export interface BenchDataset {
  /** The dataset's LanceDB directory. */
  lancedbDir: string;
  collectionId: string;
  entities: number;
  texts: string[];
  vectors: Float32Array[];
  dimensions: number;
}

/** The options every such bench takes (`--data-dir`, `--queries`, `--cache-dir`), beside its own. */
export function datasetOptions(defaultQueries: number) {
  return {
    'data-dir': { type: 'string' },
    queries: { type: 'string', default: String(defaultQueries) },
    'cache-dir': { type: 'string', default: path.join(os.homedir(), '.cache', 'catchment') },
  } satisfies ParseArgsConfig['options'];
}

/** Opens the dataset the parsed options name; throws a usage error when `--data-dir` is missing or `--queries` is not a count. */
export async function openBenchDataset(values: { 'data-dir'?: string; queries: string; 'cache-dir': string }): Promise<BenchDataset> {
  if (!values['data-dir']) throw new Error('--data-dir: a directory bench:search built (npm run bench:search -- --data-dir DIR)');
  const queries = Number(values.queries);
  if (!Number.isInteger(queries) || queries <= 0) throw new Error(`--queries: a whole number above 0, not ${values.queries}`);
  const dataDir = path.resolve(values['data-dir']);
  const prepared = JSON.parse(readFileSync(path.join(dataDir, 'bench-search.json'), 'utf8')) as { collectionId: string; config: Record<string, unknown>; entities: number };
  const texts = searchQueries(queries, prepared.entities, datasetTextOf(prepared.config));
  const embedder = await WordVectorEmbedder.open({ cacheDir: values['cache-dir'] });
  try {
    const vectors = await embedder.embed(texts);
    return { lancedbDir: path.join(dataDir, 'lancedb'), collectionId: prepared.collectionId, entities: prepared.entities, texts, vectors, dimensions: embedder.dimensions };
  } finally {
    await embedder.close();
  }
}

