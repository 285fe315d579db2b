import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, http, TEST_ENCRYPTION_KEY, type TestDatabase } from './support/harness.js';
import { runCli, startServerProcess } from './support/process.js';

const dirs: string[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await Promise.all(databases.map((database) => database.drop()));
});
function dataDir() {
  const dir = mkdtempSync(path.join(tmpdir(), 'catchment-cli-'));
  dirs.push(dir);
  return dir;
}

describe('operator CLI and the server process', () => {
  test('embedded: first start prints the key once; the CLI joins the running server\'s database; SIGTERM exits cleanly', async () => {
    const env = { CATCHMENT_DATA_DIR: dataDir() };
    const server = await startServerProcess({ ...env, CATCHMENT_LOG_LEVEL: 'debug' });
    try {
      const printedKey = /API key of the default organization \(shown once\): (\S+)/.exec(server.output())?.[1];
      expect(printedKey).toMatch(/^ck_/);
      expect((await http(server.url, 'GET', '/collections', { apiKey: printedKey })).status).toBe(200);
      const defaultOrgId = /Default organization: (\S+)/.exec(server.output())?.[1];
      expect(defaultOrgId).toMatch(/^[0-9a-f-]{36}$/);

      // A second server on the same data directory is refused: it could not share the first one's queue.
      const rival = await runCli(['start'], { ...env, PORT: '0' });
      expect(rival.code).toBe(1);
      expect(rival.stderr).toMatch(/is running Catchment on/);

      const org = await runCli(['orgs', 'create', '--name', 'Acme'], env);
      expect(org.code).toBe(0);
      expect(org.json).toEqual({ organization: { id: expect.any(String), name: 'Acme' }, api_key: expect.stringMatching(/^ck_/) });
      // The key was written to the server's own database: the running server accepts it.
      const created = await http(server.url, 'POST', '/collections', { apiKey: org.json.api_key, body: { name: 'From the CLI org' } });
      expect(created.status).toBe(200);
      expect(created.body.organization_id).toBe(org.json.organization.id);

      const second = await runCli(['api-keys', 'create', '--org', org.json.organization.id], env);
      expect(second.json).toMatchObject({ organization_id: org.json.organization.id, api_key: expect.stringMatching(/^ck_/) });
      expect((await http(server.url, 'GET', '/collections', { apiKey: second.json.api_key })).body).toHaveLength(1);

      const token = await runCli(['tokens', 'issue', '--org', org.json.organization.id, '--email', 'Ada@Example.com', '--role', 'owner', '--ttl', '600'], env);
      expect(token.json).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 600 });
      const viewer = await http(server.url, 'POST', '/graphql', { token: token.json.access_token, body: { query: '{ viewer { email role organization { name } } }' } });
      expect(viewer.body.data.viewer).toEqual({ email: 'ada@example.com', role: 'owner', organization: { name: 'Acme' } });

      // Listings: the default organization first, keys by id and prefix, never the key itself.
      const orgs = await runCli(['orgs', 'list'], env);
      expect(orgs.code).toBe(0);
      expect(orgs.json).toEqual([
        { id: defaultOrgId, name: 'Default', created_at: expect.any(String), active_api_keys: 1 },
        { id: org.json.organization.id, name: 'Acme', created_at: expect.any(String), active_api_keys: 2 },
      ]);
      const defaultKeys = await runCli(['api-keys', 'list', '--org', defaultOrgId!], env);
      expect(defaultKeys.json).toEqual([{ id: expect.any(String), organization_id: defaultOrgId, prefix: printedKey!.slice(0, 8), created_at: expect.any(String), revoked_at: null }]);
      expect(defaultKeys.stdout).not.toContain(printedKey);

      // The bootstrap key, found by its prefix, is rotated: the new key works, the old one no longer does.
      const rotated = await runCli(['api-keys', 'rotate', '--id', defaultKeys.json[0].id], env);
      expect(rotated.code).toBe(0);
      expect(rotated.json).toEqual({
        id: expect.any(String),
        organization_id: defaultOrgId,
        api_key: expect.stringMatching(/^ck_/),
        created_at: expect.any(String),
        replaced: { id: defaultKeys.json[0].id, revoked_at: expect.any(String) },
      });
      expect((await http(server.url, 'GET', '/collections', { apiKey: rotated.json.api_key })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the server's key cache holds a key up to 1 s
      expect((await http(server.url, 'GET', '/collections', { apiKey: printedKey })).status).toBe(401);
      const afterRotation = await runCli(['api-keys', 'list', '--org', defaultOrgId!], env);
      expect(afterRotation.json.map((key: { revoked_at: string | null }) => key.revoked_at === null)).toEqual([false, true]);
      expect((await runCli(['api-keys', 'list', '--org', '00000000-0000-7000-8000-000000000000'], env)).stderr).toMatch(/not found/);

      const revoked = await runCli(['api-keys', 'revoke', '--id', second.json.id], env);
      expect(revoked.json).toMatchObject({ id: second.json.id, revoked_at: expect.any(String) });
      expect((await http(server.url, 'GET', '/collections', { apiKey: second.json.api_key })).status).toBe(401);

      // Nothing secret reached the logs: the server's debug logs hold the bootstrap key only in its one banner line.
      const serverOutput = server.output();
      expect(serverOutput.split(printedKey!).length - 1).toBe(1);
      expect(serverOutput).toMatch(/"msg":"request"/);
      for (const secret of [org.json.api_key, second.json.api_key, token.json.access_token]) {
        expect(org.stderr + second.stderr + token.stderr + serverOutput).not.toContain(secret);
      }

      const badRole = await runCli(['tokens', 'issue', '--org', org.json.organization.id, '--email', 'x@example.com', '--role', 'emperor'], env);
      expect(badRole.code).toBe(1);
      expect(JSON.parse(badRole.stderr.split('\n')[0]!)).toMatchObject({ code: 'BAD_USER_INPUT', error: expect.stringMatching(/role/) });
      const unknownOrg = await runCli(['api-keys', 'create', '--org', '00000000-0000-7000-8000-000000000000'], env);
      expect(unknownOrg.code).toBe(1);
      expect(unknownOrg.stderr).toMatch(/not found/);
      const usage = await runCli(['orgs', 'create'], env);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/--name is required/);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }

    // A restart on the same data keeps everything and prints no key.
    const restarted = await startServerProcess(env);
    try {
      expect(restarted.output()).not.toMatch(/API key/);
      const list = await http(restarted.url, 'GET', '/collections', {});
      expect(list.status).toBe(401);
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  });

  test('servers deployment: migrate and operator commands against PostgreSQL, with and without a running server', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const env = { DATABASE_URL: database.url, CATCHMENT_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, CATCHMENT_DATA_DIR: dataDir() };
    const migrated = await runCli(['migrate'], env);
    expect(migrated.code).toBe(0);
    expect(migrated.json.applied.length).toBeGreaterThan(0);
    expect((await runCli(['migrate'], env)).json).toEqual({ applied: [] });
    const org = await runCli(['orgs', 'create', '--name', 'Offline made'], env);
    expect(org.code).toBe(0);

    const server = await startServerProcess({ ...env, CATCHMENT_BOOTSTRAP_API_KEY: 'ck_never_used_because_db_not_empty' });
    try {
      // Organizations existed already: no default organization, no key printed.
      expect(server.output()).not.toMatch(/API key/);
      expect((await http(server.url, 'GET', '/collections', { apiKey: org.json.api_key })).status).toBe(200);
      const token = await runCli(['tokens', 'issue', '--org', org.json.organization.id, '--email', 'op@example.com', '--role', 'admin'], env);
      expect(token.json.expires_in).toBe(3600);
      expect((await http(server.url, 'GET', '/collections', { token: token.json.access_token })).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test('embedded: where no server runs and no database exists, the CLI says so and creates nothing unless asked', async () => {
    const dir = path.join(dataDir(), 'elsewhere');
    const refused = await runCli(['orgs', 'list'], { CATCHMENT_DATA_DIR: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`No Catchment database in ${dir}`);
    expect(existsSync(dir)).toBe(false);
    expect((await runCli(['api-keys', 'create', '--org', '00000000-0000-7000-8000-000000000000'], { CATCHMENT_DATA_DIR: dir })).code).toBe(2);
    expect(existsSync(dir)).toBe(false);

    const created = await runCli(['orgs', 'create', '--name', 'On purpose', '--create'], { CATCHMENT_DATA_DIR: dir });
    expect(created.code).toBe(0);
    expect(existsSync(path.join(dir, 'pglite'))).toBe(true);
    // Once the database exists, commands run without --create.
    expect((await runCli(['orgs', 'list'], { CATCHMENT_DATA_DIR: dir })).json).toEqual([expect.objectContaining({ name: 'On purpose', active_api_keys: 1 })]);
  });

  test('a wrong configuration value stops the process with a message naming the variable', async () => {
    const result = await runCli(['start'], { PORT: 'eighty', CATCHMENT_DATA_DIR: dataDir() });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/PORT must be an integer/);
  });

  test('SIGTERM lets an in-flight request finish before the process exits', async () => {
    const env = { CATCHMENT_DATA_DIR: dataDir(), CATCHMENT_BOOTSTRAP_API_KEY: 'ck_shutdown_test_key_0123456789' };
    const server = await startServerProcess(env);
    const body = JSON.stringify({ name: 'Created during shutdown', readable_id: 'during-shutdown' });
    const { hostname, port } = new URL(server.url);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: hostname, port, method: 'POST', path: '/collections', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': env.CATCHMENT_BOOTSTRAP_API_KEY } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      // Half the body now, the rest after SIGTERM: the request is in flight when the signal lands.
      req.write(body.slice(0, 10));
      setTimeout(() => {
        const exit = server.stop('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 500);
        void exit;
      }, 300);
    });
    const result = await response;
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body).readable_id).toBe('during-shutdown');
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
