/**
 * The search tiers in-process over a real LanceDB index in a temporary directory, with a small
 * deterministic embedder (hashed bag of words): what the tier tests beside the service run on.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Orm } from '../../platform/db/database.js';
import type { Embedder } from '../../platform/embeddings/embedder.js';
import type { Logger } from '../../platform/logger.js';
import type { Reranker } from '../../platform/rerank/reranker.js';
import { LanceDbVectorIndex } from '../../platform/vectors/lancedb/lancedb-index.js';
import { chunkIdOf, type ChunkRecord } from '../../platform/vectors/vector-index.js';
import { AgenticSearch } from './agentic/agentic-search.js';
import { ClassicSearch } from './classic/classic-search.js';
import { HeuristicPlanner } from './classic/heuristic-planner.js';
import { EntityNavigator } from './entity-navigator.js';
import type { FederatedSources } from './federated-sources.js';
import { LegacySearch } from './legacy-search.js';
import { IndexRetrieval, type SearchScope } from './retrieval.js';

const DIMENSIONS = 32;
const CONNECTION = 'conn-1';

/** Each word adds a hashed direction: texts sharing words are close. */
export const hashingEmbedder: Embedder = {
  modelName: 'test-hashing',
  dimensions: DIMENSIONS,
  async embed(texts) {
    return texts.map((text) => {
      const vector = new Float32Array(DIMENSIONS);
      for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
        let hash = 2166136261;
        for (const char of word) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
        vector[(hash >>> 0) % DIMENSIONS]! += 1;
      }
      const norm = Math.hypot(...vector) || 1;
      return vector.map((x) => x / norm);
    });
  },
  async close() {},
};

export const quietLogger = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined, child: () => quietLogger } as unknown as Logger;
/** Only what IndexRetrieval's cache invalidation registers; nothing here touches a database. */
const noDatabase = { em: { getEventManager: () => ({ registerSubscriber: () => undefined }) } } as unknown as Orm;

export interface TestEntity {
  id: string;
  chunks: string[];
  type?: string;
  name?: string;
}

/** Opens the tiers; `collection(entities)` writes a fresh collection and gives its scope. */
export async function openTiers(reranker: Reranker | null = null) {
  const directory = mkdtempSync(path.join(tmpdir(), 'catchment-tiers-'));
  const index = await LanceDbVectorIndex.open(directory, DIMENSIONS);
  const retrieval = new IndexRetrieval({
    orm: noDatabase,
    vectors: async () => index,
    embedder: async () => hashingEmbedder,
    keywordWeight: 0.5,
    federated: {} as FederatedSources,
    scopeCacheMs: 0,
  });
  const classic = new ClassicSearch(retrieval, new HeuristicPlanner(), reranker, quietLogger);
  const legacy = new LegacySearch(retrieval, null);
  const agentic = new AgenticSearch(retrieval, new EntityNavigator(noDatabase), null, classic, { maxIterations: 12, timeoutMs: 10_000 }, quietLogger);

  async function collection(entities: TestEntity[]): Promise<SearchScope> {
    const id = randomUUID();
    const texts = entities.flatMap((entity) => entity.chunks.map((text, chunkIndex) => ({ entity, text, chunkIndex })));
    const vectors = await hashingEmbedder.embed(texts.map(({ text }) => text));
    const records: ChunkRecord[] = texts.map(({ entity, text, chunkIndex }, i) => ({
      chunkId: chunkIdOf(CONNECTION, entity.id, chunkIndex),
      sourceConnectionId: CONNECTION,
      entityId: entity.id,
      chunkIndex,
      name: entity.name ?? entity.id,
      text,
      vector: vectors[i]!,
      entityType: entity.type ?? 'file',
      sourceName: 'local_folder',
      breadcrumbs: [],
      createdAt: null,
      updatedAt: null,
      webUrl: `file:///${entity.id}`,
      url: null,
      syncId: CONNECTION,
      syncJobId: 'job-1',
      rawSourceFields: {},
      access: { viewers: null, isPublic: null },
    }));
    await index.add(id, records);
    return { collection: { id, readableId: id } as SearchScope['collection'], indexedConnectionIds: [CONNECTION], federated: [], sourceNames: ['local_folder'] };
  }

  return {
    retrieval,
    classic,
    legacy,
    agentic,
    collection,
    async close() {
      await index.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
