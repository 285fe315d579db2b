import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, isEmbedded, loadConfig, settings } from './config.js';

const noDotenv = '/nonexistent/.env';

describe('configuration', () => {
  test('defaults describe the embedded deployment on 127.0.0.1:8080 with data under ./data', () => {
    const config = loadConfig({}, noDotenv);
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8080, dataDir: './data', databaseUrl: undefined, redisUrl: undefined, lanceDbIndexCacheMb: 128 });
    expect(loadConfig({ CATCHMENT_LANCEDB_INDEX_CACHE_MB: '640' }, noDotenv).lanceDbIndexCacheMb).toBe(640);
    expect(isEmbedded(config)).toBe(true);
  });

  test.each([
    ['PORT', 'eighty', /PORT must be an integer/],
    ['PORT', '70000', /PORT must be between 0 and 65535/],
    ['DATABASE_URL', 'mysql://localhost/x', /DATABASE_URL must use postgres: or postgresql:/],
    ['DATABASE_URL', 'not a url', /DATABASE_URL must be a URL/],
    ['REDIS_URL', 'http://localhost', /REDIS_URL must use redis: or rediss:/],
    ['CATCHMENT_LOG_LEVEL', 'loud', /CATCHMENT_LOG_LEVEL must be one of/],
    ['CATCHMENT_ENCRYPTION_KEY', 'c2hvcnQ=', /CATCHMENT_ENCRYPTION_KEY must be 32 bytes/],
    ['CATCHMENT_BOOTSTRAP_API_KEY', 'short', /CATCHMENT_BOOTSTRAP_API_KEY must be at least 24 characters/],
    ['CATCHMENT_RATE_LIMIT_WINDOW_SECONDS', '0', /CATCHMENT_RATE_LIMIT_WINDOW_SECONDS must be between 1/],
    ['CATCHMENT_WEBHOOKS_ALLOW_HTTP', 'maybe', /CATCHMENT_WEBHOOKS_ALLOW_HTTP must be true or false/],
    ['CATCHMENT_CORS_ORIGINS', 'https://app.example.com/path', /CATCHMENT_CORS_ORIGINS must be \* or comma-separated origins/],
    ['CATCHMENT_LANCEDB_INDEX_CACHE_MB', '8', /CATCHMENT_LANCEDB_INDEX_CACHE_MB must be between 16/],
  ])('%s=%s is refused with a message naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value }, noDotenv)).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }, noDotenv)).toThrow(message);
  });

  test('a .env file fills what the environment leaves unset, and the environment wins', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'catchment-env-'));
    const file = path.join(dir, '.env');
    writeFileSync(file, 'PORT=9090\nHOST=0.0.0.0\nREDIS_URL=redis://127.0.0.1:6379\n');
    const config = loadConfig({ HOST: '127.0.0.2' }, file);
    expect(config.port).toBe(9090);
    expect(config.host).toBe('127.0.0.2');
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(isEmbedded(config)).toBe(true);
  });

  test('the README configuration table lists exactly the settings the code reads', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]).sort();
    expect(documented).toEqual(Object.values(settings).map((setting) => setting.env).sort());
  });
});
