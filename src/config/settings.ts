import os from 'node:os';
import path from 'node:path';
import { apiKeyValue, base64Key, boolean, ConfigError, corsOrigins, integer, objectStoreUrl, oneOf, type Setting, text, url } from './parsers.js';

/**
 * Every setting the service reads. The README's configuration table lists exactly these
 * (a test keeps the two in step).
 */
export const settings = {
  host: { env: 'HOST', default: '127.0.0.1', parse: text, description: 'Interface the HTTP server binds to.' },
  port: { env: 'PORT', default: 8080, parse: integer(0, 65535), description: 'HTTP port (0 picks a free one).' },
  dataDir: {
    env: 'CATCHMENT_DATA_DIR',
    default: './data',
    parse: text,
    description: 'Where embedded data lives: the PGlite database, the generated encryption key, later the vector index and raw data.',
  },
  cacheDir: {
    env: 'CATCHMENT_CACHE_DIR',
    default: path.join(os.homedir(), '.cache', 'catchment'),
    parse: (raw: string) => path.resolve(raw),
    description: 'Machine-wide cache of derived files, such as the built-in model converted to a fast binary form (built once, then shared).',
  },
  rawStoreUrl: {
    env: 'CATCHMENT_RAW_STORE_URL',
    parse: objectStoreUrl,
    description:
      'Where the raw data store keeps every synced entity and file (for `replay_from_arf`, re-embedding and deletes): `s3://<bucket>/<prefix>` on S3-compatible object storage, shared by API and worker processes on different hosts. Unset: files under the data directory.',
  },
  rawStoreEndpoint: {
    env: 'CATCHMENT_RAW_STORE_ENDPOINT',
    parse: url('http:', 'https:'),
    description: 'With an `s3://` raw store: the S3 API endpoint, e.g. `http://minio:9000` or `https://<account>.r2.cloudflarestorage.com`. Unset: AWS S3 in `CATCHMENT_RAW_STORE_REGION`.',
  },
  rawStoreRegion: { env: 'CATCHMENT_RAW_STORE_REGION', default: 'us-east-1', parse: text, description: 'With an `s3://` raw store: the region requests are signed for (SigV4).' },
  rawStorePathStyle: {
    env: 'CATCHMENT_RAW_STORE_PATH_STYLE',
    parse: boolean,
    description: 'With an `s3://` raw store: address the bucket in the path (`endpoint/bucket/key`) rather than the host name (`bucket.endpoint/key`). Unset: path style when an endpoint is set (MinIO, Ceph), host style on AWS.',
  },
  rawStoreAccessKeyId: { env: 'CATCHMENT_RAW_STORE_ACCESS_KEY_ID', parse: text, description: 'With an `s3://` raw store: the access key id (required).' },
  rawStoreSecretAccessKey: { env: 'CATCHMENT_RAW_STORE_SECRET_ACCESS_KEY', parse: text, description: 'With an `s3://` raw store: the secret access key (required; never logged).' },
  databaseUrl: {
    env: 'DATABASE_URL',
    parse: url('postgres:', 'postgresql:'),
    description: 'PostgreSQL connection URL. Unset: an embedded PGlite database under the data directory.',
  },
  databaseConnectTimeoutSeconds: {
    env: 'CATCHMENT_DATABASE_CONNECT_TIMEOUT_SECONDS',
    default: 60,
    parse: integer(1, 3600),
    description: 'At start, how long to keep trying to reach `DATABASE_URL` (each attempt logged, with growing pauses between them) before the process exits with an error.',
  },
  redisUrl: {
    env: 'REDIS_URL',
    parse: url('redis:', 'rediss:'),
    description: 'Redis URL for the job queue, pub/sub and rate limits. Unset: in-process equivalents (single process only).',
  },
  redisPrefix: {
    env: 'CATCHMENT_REDIS_PREFIX',
    default: 'catchment',
    parse: (raw: string, name: string) => {
      if (!/^[\w.-]{1,64}$/.test(raw)) throw new ConfigError(`${name} must be 1 to 64 letters, digits, '.', '_' or '-'`);
      return raw;
    },
    description: 'Prefix of every Redis key and channel, so several deployments can share one Redis.',
  },
  encryptionKey: {
    env: 'CATCHMENT_ENCRYPTION_KEY',
    parse: base64Key,
    description:
      'Base64 of 32 random bytes that encrypts credentials and signing keys at rest. Unset: generated once into `<data dir>/encryption.key`. Set it when several processes share one database.',
  },
  bootstrapApiKey: {
    env: 'CATCHMENT_BOOTSTRAP_API_KEY',
    parse: apiKeyValue,
    description: 'On the first start with an empty database, the API key of the default organization (otherwise one is generated and printed once).',
  },
  logLevel: {
    env: 'CATCHMENT_LOG_LEVEL',
    default: 'info' as const,
    parse: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    description: 'Log level of the JSON logs on stdout.',
  },
  corsOrigins: {
    env: 'CATCHMENT_CORS_ORIGINS',
    default: [] as readonly string[] | '*',
    parse: corsOrigins,
    description: 'Browser origins allowed to call the API from another site (CORS on REST, GraphQL, its SSE stream and MCP): comma-separated origins such as `https://app.example.com`, or `*` for any. Empty: no CORS headers, preflights are not answered.',
  },
  metricsEnabled: {
    env: 'CATCHMENT_METRICS_ENABLED',
    default: true,
    parse: boolean,
    description: 'Serve Prometheus metrics at `/metrics` (see *Metrics*). `false`: 404 there.',
  },
  metricsToken: {
    env: 'CATCHMENT_METRICS_TOKEN',
    parse: (raw: string, name: string) => {
      if (raw.length < 16 || /\s/.test(raw)) throw new ConfigError(`${name} must be at least 16 characters without spaces`);
      return raw;
    },
    description: 'When set, `/metrics` answers only requests with `Authorization: Bearer <token>` (401 otherwise). Unset: anyone who reaches the port may read it.',
  },
  workerMetricsPort: {
    env: 'CATCHMENT_WORKER_METRICS_PORT',
    parse: integer(0, 65535),
    description: 'A worker-only process (`catchment worker`) serves `/metrics` and `/healthz` on this port (on `HOST`), so its sync and webhook counters can be scraped. Unset: it serves no HTTP.',
  },
  maxBodyBytes: {
    env: 'CATCHMENT_MAX_BODY_BYTES',
    default: 1_048_576,
    parse: integer(1024, 104_857_600),
    description: 'Largest accepted request body; larger bodies get 413.',
  },
  rateLimitRequests: {
    env: 'CATCHMENT_RATE_LIMIT_REQUESTS',
    default: 600,
    parse: integer(0, 1_000_000),
    description: 'Requests per organization and resource family (collections, source connections, sources, webhooks) per window, refused ones (422) included; search has its own budget. 0 disables rate limiting, search included.',
  },
  searchRateLimitRequests: {
    env: 'CATCHMENT_SEARCH_RATE_LIMIT_REQUESTS',
    default: 300,
    parse: integer(0, 1_000_000),
    description: 'Searches per organization per window, on every transport: each search field of a GraphQL request counts (ten aliased searches are ten), as does each REST search and agentic stream. 0 disables search limiting.',
  },
  rateLimitWindowSeconds: {
    env: 'CATCHMENT_RATE_LIMIT_WINDOW_SECONDS',
    default: 60,
    parse: integer(1, 86_400),
    description: 'Length of the rate-limit window in seconds.',
  },
  graphqlMaxCost: {
    env: 'CATCHMENT_GRAPHQL_MAX_COST',
    default: 50_000,
    parse: integer(1, 100_000_000),
    description: 'Most fields one GraphQL operation may resolve, counted before it runs: each selected field (aliases included) is 1, its sub-selection counted once per item its `limit` asks for (100 when unsaid). Larger operations are refused with QUERY_TOO_COMPLEX (HTTP 400).',
  },
  graphqlMaxDepth: {
    env: 'CATCHMENT_GRAPHQL_MAX_DEPTH',
    default: 20,
    parse: integer(2, 200),
    description: 'Most levels of nested fields in one GraphQL operation, at most 200 (the standard introspection query needs 15); deeper ones are refused with QUERY_TOO_COMPLEX.',
  },
  tokenTtlSeconds: {
    env: 'CATCHMENT_TOKEN_TTL_SECONDS',
    default: 3600,
    parse: integer(60, 31_536_000),
    description: 'Default lifetime of bearer tokens issued by `catchment tokens issue`.',
  },
  shutdownTimeoutSeconds: {
    env: 'CATCHMENT_SHUTDOWN_TIMEOUT_SECONDS',
    default: 25,
    parse: integer(1, 3600),
    description: 'On SIGTERM, how long in-flight requests may take before the process exits anyway.',
  },
  mcpSessionIdleSeconds: {
    env: 'CATCHMENT_MCP_SESSION_IDLE_SECONDS',
    default: 1800,
    parse: integer(1, 86_400),
    description: 'An MCP session (Streamable HTTP at /mcp) unused this long is closed; clients open another (`catchment mcp` does so by itself).',
  },
  embedder: {
    env: 'CATCHMENT_EMBEDDER',
    default: 'builtin' as const,
    parse: oneOf('builtin', 'openai'),
    description: '`builtin`: offline word-vector model (`catchment-word-vectors-100d-sif2`, 100 dimensions). `openai`: any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM, TEI).',
  },
  embeddingUrl: {
    env: 'CATCHMENT_EMBEDDING_URL',
    parse: url('http:', 'https:'),
    description: 'With `openai`: base URL of the endpoint, e.g. `https://api.openai.com/v1` (POST `<url>/embeddings`).',
  },
  embeddingApiKey: {
    env: 'CATCHMENT_EMBEDDING_API_KEY',
    parse: text,
    description: 'With `openai`: bearer key for the endpoint, if it needs one.',
  },
  embeddingModel: {
    env: 'CATCHMENT_EMBEDDING_MODEL',
    parse: text,
    description: 'With `openai`: model name (recorded on new collections as `embedding_model_name`).',
  },
  embeddingDimensions: {
    env: 'CATCHMENT_EMBEDDING_DIMENSIONS',
    parse: integer(1, 65_536),
    description: 'With `openai`: vector size of the model (recorded on new collections as `vector_size`).',
  },
  hybridKeywordWeight: {
    env: 'CATCHMENT_HYBRID_KEYWORD_WEIGHT',
    parse: (raw: string, name: string) => {
      const value = Number(raw);
      if (!(value >= 0 && value <= 1)) throw new ConfigError(`${name} must be a number from 0 to 1`);
      return value;
    },
    description: 'Share of keyword (BM25, divided by the best BM25 of the query) in hybrid search, the rest going to vector cosine similarity. Default: 0.5 (tuned on SciFact train with the built-in embedder).',
  },
  lanceDbIndexCacheMb: {
    env: 'CATCHMENT_LANCEDB_INDEX_CACHE_MB',
    default: 128,
    parse: integer(16, 1_048_576),
    description:
      'Embedded index: MiB of index data (IVF partitions, full-text postings) LanceDB keeps in memory across searches. 128 holds every index of a 100,000-chunk collection; at 1,000,000 chunks (~550 MB of indexes) 640 made a hybrid search ~7× cheaper for ~410 MiB more resident memory.',
  },
  lanceDbShardRows: {
    env: 'CATCHMENT_LANCEDB_SHARD_ROWS',
    default: 250_000,
    parse: integer(1_000, 100_000_000),
    description:
      'Embedded index: chunks of a collection per LanceDB table (shard); writes go to a new one once the last holds this many, and searches read them all. Bounds the memory and time of each table\'s upkeep, which grow with the table (a 1,000,000-chunk table\'s peaked 340 MiB above the sync\'s). Every process sharing the data directory must use the same value.',
  },
  weaviateUrl: {
    env: 'WEAVIATE_URL',
    parse: url('http:', 'https:'),
    description: 'Weaviate base URL (e.g. `http://weaviate:8080`; gRPC on the same host, port 50051). Unset: the embedded LanceDB index under the data directory.',
  },
  weaviateApiKey: {
    env: 'WEAVIATE_API_KEY',
    parse: text,
    description: 'With Weaviate: API key, if the server needs one.',
  },
  weaviateGrpcPort: {
    env: 'WEAVIATE_GRPC_PORT',
    default: 50051,
    parse: integer(1, 65535),
    description: 'With Weaviate: its gRPC port (the client queries over gRPC).',
  },
  llmUrl: {
    env: 'CATCHMENT_LLM_URL',
    parse: url('http:', 'https:'),
    description: 'Base URL of an OpenAI-compatible chat-completions endpoint (POST `<url>/chat/completions`) for classic planning, agentic search and legacy completions. Unset: built-in heuristic planner and deterministic agent.',
  },
  llmApiKey: {
    env: 'CATCHMENT_LLM_API_KEY',
    parse: text,
    description: 'Bearer key for that endpoint, if it needs one.',
  },
  llmModel: {
    env: 'CATCHMENT_LLM_MODEL',
    default: 'gpt-4o-mini',
    parse: text,
    description: 'Chat model name sent to the endpoint.',
  },
  llmTimeoutSeconds: {
    env: 'CATCHMENT_LLM_TIMEOUT_SECONDS',
    default: 30,
    parse: integer(1, 600),
    description: 'Longest wait for one language-model answer; a classic plan that times out falls back to instant search.',
  },
  agenticMaxIterations: {
    env: 'CATCHMENT_AGENTIC_MAX_ITERATIONS',
    default: 12,
    parse: integer(1, 100),
    description: 'Agentic search: most agent turns (tool-calling rounds) before results are returned.',
  },
  agenticTimeoutSeconds: {
    env: 'CATCHMENT_AGENTIC_TIMEOUT_SECONDS',
    default: 120,
    parse: integer(1, 3600),
    description: 'Agentic search: time budget; when spent, what was collected is returned.',
  },
  rerankUrl: {
    env: 'CATCHMENT_RERANK_URL',
    parse: url('http:', 'https:'),
    description: 'A rerank endpoint itself (e.g. `http://tei:80/rerank`, `https://api.jina.ai/v1/rerank`, `http://vllm:8000/v1/rerank`) that reorders the top candidates of hybrid, classic and agentic search; when it fails or is late, the unreranked order stands. Unset: no reranking.',
  },
  rerankProtocol: {
    env: 'CATCHMENT_RERANK_PROTOCOL',
    default: 'auto' as const,
    parse: oneOf('auto', 'tei', 'cohere'),
    description: '`tei`: Text Embeddings Inference (`{query, texts}` → `[{index, score}]`). `cohere`: Cohere, Jina, vLLM, Infinity, LiteLLM (`{model, query, documents, top_n}` → `{results: [{index, relevance_score}]}`). `auto`: `cohere` when a model is set or the path is `/v1/rerank` or `/v2/rerank`, else `tei`.',
  },
  rerankModel: {
    env: 'CATCHMENT_RERANK_MODEL',
    parse: text,
    description: 'Rerank model name sent with the `cohere` protocol (e.g. `jina-reranker-v2-base-multilingual`, `rerank-v3.5`, `BAAI/bge-reranker-v2-m3`).',
  },
  rerankApiKey: {
    env: 'CATCHMENT_RERANK_API_KEY',
    parse: text,
    description: 'Bearer key for the rerank endpoint, if it needs one; sent to that URL only (redirects are not followed).',
  },
  rerankTimeoutMs: {
    env: 'CATCHMENT_RERANK_TIMEOUT_MS',
    default: 2000,
    parse: integer(10, 600_000),
    description: 'Longest wait for the scores of one search, every batch included; later, the unreranked order is returned.',
  },
  rerankTopK: {
    env: 'CATCHMENT_RERANK_TOP_K',
    default: 50,
    parse: integer(1, 1000),
    description: 'How many of the first candidates of a ranking are reranked; the rest follow in their order.',
  },
  rerankBatchSize: {
    env: 'CATCHMENT_RERANK_BATCH_SIZE',
    default: 32,
    parse: integer(1, 1000),
    description: 'Documents per rerank request (TEI accepts 32 unless started with a larger `--max-client-batch-size`); lowered on its own when the server names a smaller maximum.',
  },
  rerankMaxDocumentChars: {
    env: 'CATCHMENT_RERANK_MAX_DOCUMENT_CHARS',
    default: 2000,
    parse: integer(100, 1_000_000),
    description: 'Each candidate text (and the query) is cut to this many characters before reranking; about 500 tokens, what small cross-encoders read.',
  },
  webhooksAllowHttp: {
    env: 'CATCHMENT_WEBHOOKS_ALLOW_HTTP',
    default: false,
    parse: boolean,
    description: 'Development mode: accept plain `http://` webhook URLs for loopback receivers (and private ones when private targets are allowed), never for public addresses; loopback targets are then allowed.',
  },
  webhooksAllowPrivateTargets: {
    env: 'CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS',
    default: false,
    parse: boolean,
    description: 'Allow webhook URLs that resolve to private, loopback or link-local addresses (refused otherwise, at subscription and at delivery time, against SSRF).',
  },
  sourcesAllowPrivateNetworks: {
    env: 'CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS',
    default: true,
    parse: boolean,
    description:
      'Web, RSS and S3 sources (and git over http) may read private-network and loopback addresses (an intranet). Set `false` where the organizations using the service should not reach its network. Link-local addresses (cloud metadata endpoints) are always refused. Checked on every connection, redirects included.',
  },
  publicUrl: {
    env: 'CATCHMENT_PUBLIC_URL',
    parse: (raw: string, name: string) => url('http:', 'https:')(raw.replace(/\/+$/, ''), name),
    description:
      'The address browsers reach the service at (e.g. `https://catchment.example.com`, a path prefix allowed). OAuth providers send users back to `<it>/oauth/callback`: register that as the redirect URI of your OAuth apps. Unset: the address the server listens on.',
  },
  oauthClientsFile: {
    env: 'CATCHMENT_OAUTH_CLIENTS_FILE',
    parse: (raw: string) => path.resolve(raw),
    description:
      'A JSON file of operator OAuth apps, `{"<short_name>": {"client_id": "…", "client_secret": "…", "token_url": "…"}}` (`token_url`: the one token endpoint the app serves, default the source\'s own), registered at each start (replacing those of the same sources; secrets sealed in the database), so users sign in with `oauth_browser` without an app of their own. See also `catchment oauth-apps`.',
  },
  localFolderRoots: {
    env: 'CATCHMENT_LOCAL_FOLDER_ROOTS',
    default: [] as string[],
    parse: (raw: string) => raw.split(',').map((root) => root.trim()).filter(Boolean).map((root) => path.resolve(root)),
    description: 'Comma-separated directories under which `local_folder` connections and local `git` repositories (paths or `file://` URLs) may read; empty disables reading local files.',
  },
  syncConcurrency: {
    env: 'CATCHMENT_SYNC_CONCURRENCY',
    default: 2,
    parse: integer(1, 64),
    description: 'Sync jobs one worker process runs at a time.',
  },
  syncBatchSize: {
    env: 'CATCHMENT_SYNC_BATCH_SIZE',
    default: 2000,
    parse: integer(1, 100_000),
    description: 'Entities the pipeline hashes, embeds and writes per batch (each batch is committed); a batch also ends at 4 MiB of text and files, or after 250 ms of waiting for its source.',
  },
  syncMaxEntities: {
    env: 'CATCHMENT_SYNC_MAX_ENTITIES',
    default: 1_000_000,
    parse: integer(1, 1_000_000_000),
    description: 'Guardrail: a sync of a connection with more entities fails unless `behavior.skip_guardrails` is set.',
  },
  syncHeartbeatSeconds: {
    env: 'CATCHMENT_SYNC_HEARTBEAT_SECONDS',
    default: 5,
    parse: integer(1, 600),
    description: 'How often a worker marks its running jobs alive.',
  },
  syncStaleSeconds: {
    env: 'CATCHMENT_SYNC_STALE_SECONDS',
    default: 60,
    parse: integer(2, 86_400),
    description: 'A RUNNING job without a heartbeat for this long failed with its worker.',
  },
  syncCancelTimeoutSeconds: {
    env: 'CATCHMENT_SYNC_CANCEL_TIMEOUT_SECONDS',
    default: 180,
    parse: integer(1, 86_400),
    description: 'A CANCELLING job whose worker does not answer for this long is forced to CANCELLED (the spec says 3 minutes).',
  },
  scheduleMinIntervalSeconds: {
    env: 'CATCHMENT_SCHEDULE_MIN_INTERVAL_SECONDS',
    default: 60,
    parse: integer(1, 86_400),
    description: 'Shortest time a cron schedule may leave between two runs; a schedule that runs more often is refused (422).',
  },
  workerTickSeconds: {
    env: 'CATCHMENT_WORKER_TICK_SECONDS',
    default: 5,
    parse: integer(1, 3600),
    description: 'How often the worker looks for due cron schedules and stuck jobs.',
  },
} satisfies Record<string, Setting<unknown>>;
