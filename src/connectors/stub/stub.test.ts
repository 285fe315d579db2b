import { describe, expect, test } from '@jest/globals';
import { CredentialsRejectedError } from '../connector.js';
import { collectRun, connectionContext, connectorEnvironment, rejection } from '../connector-testing.js';
import type { TokenProvider } from '../contract/source-http.js';
import connector, { CHECKPOINT_EVERY } from './index.js';

const flat = { entity_count: 250, hierarchy_depth: 0, size_mix: 'small' } as const;
const credentials = { token: 't' };

describe('checkpoints', () => {
  test(`a run saves a checkpoint every ${CHECKPOINT_EVERY} entities, after the entities before it`, async () => {
    const run = await collectRun(connector, { config: flat, credentials });
    expect(run).toMatchObject({ complete: true, cursor: { entity_count: 250, revision: 0, seed: 42 } });
    expect(run.ids).toHaveLength(250);
    expect(run.checkpoints).toEqual([
      { entity_count: 250, revision: 0, seed: 42, resume_from: 100 },
      { entity_count: 250, revision: 0, seed: 42, resume_from: 200 },
    ]);
  });

  test('a run that fails half-way has saved the checkpoints before the failure; resumed from the last, it yields the rest and is not complete', async () => {
    const saved: unknown[] = [];
    const failure = await rejection(collectRun(connector, { config: { ...flat, fail_after: 230 }, credentials, checkpoints: saved as never[] }));
    expect(failure.message).toMatch(/failed after 230/);
    expect(saved).toHaveLength(2);
    const resumed = await collectRun(connector, { config: flat, credentials, cursor: saved.at(-1) as never, resuming: true });
    expect(resumed.complete).toBe(false);
    expect(resumed.ids).toEqual(Array.from({ length: 50 }, (_, i) => `stub-${200 + i}`).sort());
    expect(resumed.deletes).toEqual([]);
    expect(resumed.cursor).toEqual({ entity_count: 250, revision: 0, seed: 42 });
  });

  test('resumed with folders, only folders not yielded before the checkpoint come again; what changed before it since comes too', async () => {
    const config = { entity_count: 300, hierarchy_depth: 1, size_mix: 'small' } as const;
    const { checkpoints } = await collectRun(connector, { config, credentials });
    const resumed = await collectRun(connector, { config: { ...config, revision: 1, entity_count: 280 }, credentials, cursor: checkpoints[1]!, resuming: true });
    const folders = resumed.ids.filter((id) => id.startsWith('folder-'));
    expect(folders).toEqual(['folder-1-20', 'folder-1-21', 'folder-1-22', 'folder-1-23', 'folder-1-24', 'folder-1-25', 'folder-1-26', 'folder-1-27']);
    const entities = resumed.ids.filter((id) => id.startsWith('stub-'));
    // Revised before the checkpoint (every tenth), and everything after it up to the new count.
    const revisedBefore = Array.from({ length: 20 }, (_, i) => `stub-${i * 10}`);
    expect(entities.sort()).toEqual([...revisedBefore, ...Array.from({ length: 80 }, (_, i) => `stub-${200 + i}`).filter((id) => !revisedBefore.includes(id))].sort());
    expect(resumed.deletes).toEqual(Array.from({ length: 20 }, (_, i) => `stub-${280 + i}`).sort());
  });

  test('the end of a finished run is no checkpoint: given as a cursor, even when "resuming", the run is incremental from it', async () => {
    const first = await collectRun(connector, { config: flat, credentials });
    const again = await collectRun(connector, { config: { ...flat, revision: 2 }, credentials, cursor: first.cursor, resuming: true });
    expect(again.complete).toBe(false);
    expect(again.ids).toEqual(Array.from({ length: 25 }, (_, i) => `stub-${i * 10}`).sort());
  });

  test('a checkpoint of another seed describes other entities: the run starts over and is complete', async () => {
    const { checkpoints } = await collectRun(connector, { config: flat, credentials });
    const other = await collectRun(connector, { config: { ...flat, seed: 7 }, credentials, cursor: checkpoints[0]!, resuming: true });
    expect(other.complete).toBe(true);
    expect(other.ids).toHaveLength(250);
  });
});

describe('authentication', () => {
  test('a pasted token "rejected" is refused at connect time, "revoked" at sync time', async () => {
    const environment = connectorEnvironment();
    await expect(connector.validate(connectionContext(connector, { config: {}, credentials: { token: 'ok' } }), environment)).resolves.toBeUndefined();
    expect(await rejection(connector.validate(connectionContext(connector, { config: {}, credentials: { token: 'rejected' } }), environment))).toBeInstanceOf(CredentialsRejectedError);
    expect(await rejection(collectRun(connector, { config: flat, credentials: { token: 'revoked' } }))).toBeInstanceOf(CredentialsRejectedError);
  });

  test('an OAuth connection fetches its token from the token provider at the start of a run', async () => {
    const asked: string[] = [];
    const tokens = (token: string): TokenProvider => ({
      accessToken: async () => {
        asked.push(token);
        return token;
      },
      refreshAfterRejection: async () => token,
    });
    expect((await collectRun(connector, { config: flat, tokens: tokens('fresh') })).ids).toHaveLength(250);
    expect(await rejection(collectRun(connector, { config: flat, tokens: tokens('revoked') }))).toBeInstanceOf(CredentialsRejectedError);
    expect(asked).toEqual(['fresh', 'revoked']);
  });

  test('its OAuth endpoints come from the config, so tests can point them at a local server', () => {
    if (connector.auth.kind !== 'oauth2') throw new Error('the stub authenticates with OAuth 2');
    const config = connectionContext(connector, { config: { oauth_token_url: 'http://127.0.0.1:9/token' }, credentials }).config;
    expect(connector.auth.oauth.tokenUrl(config)).toBe('http://127.0.0.1:9/token');
    expect(connector.auth.oauth.authorizeUrl(config)).toBe('https://stub.example/oauth/authorize');
  });
});
