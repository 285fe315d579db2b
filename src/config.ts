/*
 * The service's configuration: the settings table (config/settings.ts: every variable with its
 * parser, default and description; the README's table lists exactly these, a test keeps the two in
 * step) read from the environment, and what is derived from it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { BUILTIN_DIMENSIONS, BUILTIN_MODEL_NAME } from './platform/embeddings/word-vector-core.js';
import { ConfigError, type Setting } from './config/parsers.js';
import { settings } from './config/settings.js';

export { ConfigError } from './config/parsers.js';
export { settings } from './config/settings.js';

type Settings = typeof settings;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type Config = {
  [K in keyof Settings]: Settings[K] extends { default: unknown } ? ValueOf<Settings[K]> : ValueOf<Settings[K]> | undefined;
};

/** Deployment derived from configuration alone: embedded when no external database is configured. */
export function isEmbedded(config: Pick<Config, 'databaseUrl'>): boolean {
  return config.databaseUrl === undefined;
}

/** Embedding model name and vector size, known without loading the model (the API needs only these). */
export function embedderInfo(config: Pick<Config, 'embedder' | 'embeddingModel' | 'embeddingDimensions'>): { modelName: string; dimensions: number } {
  if (config.embedder === 'builtin') return { modelName: BUILTIN_MODEL_NAME, dimensions: BUILTIN_DIMENSIONS };
  return { modelName: config.embeddingModel!, dimensions: config.embeddingDimensions! };
}

/**
 * The hybrid fusion weight in force: configured, or 0.5. Fusion keeps cosine on its own scale, so weak
 * vectors (the built-in embedder's) get little say without a weight of their own.
 */
export function hybridKeywordWeight(config: Pick<Config, 'embedder' | 'hybridKeywordWeight'>): number {
  return config.hybridKeywordWeight ?? 0.5;
}

/**
 * Reads the configuration from `env`, with values from a `.env` file in the working directory
 * filling in what the environment leaves unset. Throws ConfigError naming the first bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, dotenvPath = path.resolve('.env')): Config {
  const fromFile = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath)) : {};
  const merged: Record<string, string | undefined> = { ...fromFile, ...env };
  const config: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const raw = merged[setting.env];
    config[key] = raw === undefined || raw === '' ? setting.default : setting.parse(raw, setting.env);
  }
  if (config.rawStoreUrl !== undefined && (config.rawStoreAccessKeyId === undefined || config.rawStoreSecretAccessKey === undefined)) {
    throw new ConfigError(`${settings.rawStoreAccessKeyId.env} and ${settings.rawStoreSecretAccessKey.env} are required when ${settings.rawStoreUrl.env} is set`);
  }
  if (config.embedder === 'openai') {
    for (const key of ['embeddingUrl', 'embeddingModel', 'embeddingDimensions'] as const) {
      if (config[key] === undefined) throw new ConfigError(`${settings[key].env} is required when CATCHMENT_EMBEDDER=openai`);
    }
  }
  return config as Config;
}
