import { describe, expect, test } from '@jest/globals';
import { deriveCollectionStatus, type ConnectionSyncState } from './collection-status.js';
import { generateReadableId, READABLE_ID_PATTERN } from './collection.service.js';
import { normalizeSyncConfig } from './sync-config.js';

const connection = (overrides: Partial<ConnectionSyncState>): ConnectionSyncState => ({
  authenticated: true,
  lastJobStatus: null,
  everCompleted: false,
  ...overrides,
});

describe('collection status derivation', () => {
  test.each<[string, ConnectionSyncState[], string]>([
    ['no connections', [], 'NEEDS SOURCE'],
    ['only unauthenticated connections', [connection({ authenticated: false, everCompleted: true })], 'NEEDS SOURCE'],
    ['connections that never synced', [connection({}), connection({ lastJobStatus: 'PENDING' })], 'NEEDS SOURCE'],
    ['one connection syncing', [connection({ lastJobStatus: 'RUNNING' }), connection({ lastJobStatus: 'FAILED' })], 'ACTIVE'],
    ['one connection completed once, now failed', [connection({ lastJobStatus: 'FAILED', everCompleted: true })], 'ACTIVE'],
    ['every connection failed its last sync', [connection({ lastJobStatus: 'FAILED' }), connection({ lastJobStatus: 'FAILED' })], 'ERROR'],
    ['one failed, one never synced', [connection({ lastJobStatus: 'FAILED' }), connection({})], 'NEEDS SOURCE'],
  ])('%s → %s', (_name, connections, expected) => {
    expect(deriveCollectionStatus(connections)).toBe(expected);
  });
});

describe('generated readable ids', () => {
  test.each([
    ['My Docs', /^my-docs-[a-z0-9]{6}$/],
    ['  Ünïcode & Friends!! 2024 ', /^unicode-friends-2024-[a-z0-9]{6}$/],
    ['!!!!', /^[a-z0-9]{6}$/],
    ['x'.repeat(64), /^x{57}-[a-z0-9]{6}$/],
  ])('%j → %s', (name, expected) => {
    const id = generateReadableId(name);
    expect(id).toMatch(expected);
    expect(id).toMatch(READABLE_ID_PATTERN);
    expect(id.length).toBeLessThanOrEqual(64);
  });

  test('suffixes differ between calls', () => {
    const ids = new Set(Array.from({ length: 50 }, () => generateReadableId('Same Name')));
    expect(ids.size).toBe(50);
  });
});

describe('sync config normalization', () => {
  test('fills defaults into the members sent and leaves the others null', () => {
    const { value, issues } = normalizeSyncConfig({ behavior: { skipGuardrails: true } }, ['sync_config']);
    expect(issues).toEqual([]);
    expect(value).toEqual({
      destinations: null,
      handlers: null,
      cursor: null,
      behavior: { skipHashComparison: false, replayFromArf: false, skipGuardrails: true },
    });
  });

  test('reports destination ids that are not UUIDs with their location', () => {
    const { issues } = normalizeSyncConfig({ destinations: { targetDestinations: ['0190a0a0-0000-7000-8000-000000000000', 'nope'] } }, ['sync_config']);
    expect(issues).toEqual([{ loc: ['sync_config', 'destinations', 'target_destinations', 1], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
  });
});
