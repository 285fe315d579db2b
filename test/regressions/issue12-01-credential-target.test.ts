import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import gitConnector from '../../src/connectors/git/index.js';
import postgresqlConnector from '../../src/connectors/postgresql/index.js';
import { parsedConfig, parsedCredentials } from '../../src/connectors/connector-testing.js';
import { serveOverHttp, TestRepository } from '../../src/connectors/git/test-repository.js';
import { createTestDatabase, graphql, http, startTestServer, type TestDatabase, type TestServer } from '../support/harness.js';

/**
 * Issue 12, finding 1: a member could point an admin's git connection at another host, and the
 * validation of the (refused) change had already sent the stored token there. Stored credentials
 * are now bound to their target, config and credential changes need the admin role, and both are
 * checked before anything is sent. The attacker is a loopback server that records what reaches it.
 */

/** An HTTP server standing in for the attacker's host: it records every request, and answers 404. */
async function startHttpAttacker() {
  const requests: IncomingHttpHeaders[] = [];
  const server = createHttpServer((request, response) => {
    requests.push(request.headers);
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A TCP server standing in for the attacker's database host: it counts connections and drops them. */
async function startTcpAttacker() {
  const seen = { connections: 0 };
  const server = createTcpServer((socket) => {
    seen.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const UPDATE = `mutation ($id: ID!, $input: SourceConnectionUpdateInput!) { updateSourceConnection(id: $id, input: $input) { id name config } }`;
const basic = (token: string) => `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

describe('issue 12-01: stored credentials are bound to their target', () => {
  const storedToken = 'glpat-stored-admin-token-0001';
  const newToken = 'glpat-new-target-token-0002';
  let server: TestServer;
  let root: string;
  let legit: Awaited<ReturnType<typeof serveOverHttp>>;
  let otherHost: Awaited<ReturnType<typeof serveOverHttp>>;
  let attacker: Awaited<ReturnType<typeof startHttpAttacker>>;
  let dbAttacker: Awaited<ReturnType<typeof startTcpAttacker>>;
  let database: TestDatabase;
  let member: string;
  let admin: string;

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(path.join(tmpdir(), 'issue12-01-')));
    for (const name of ['repo', 'repo2']) new TestRepository(path.join(root, name)).write('README.md', `# ${name}\n`).commit('First');
    [legit, otherHost, attacker, dbAttacker, database] = await Promise.all([serveOverHttp(root, storedToken), serveOverHttp(root, newToken), startHttpAttacker(), startTcpAttacker(), createTestDatabase()]);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('create table notes (id int primary key, body text)');
    await client.end();
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
    const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    const issue = (role: string) => server.running.core.services.auth.issueToken({ organizationId: orgId, email: `${role}@example.com`, role }).then((t) => t.access_token);
    [member, admin] = await Promise.all([issue('member'), issue('admin')]);
    expect((await http(server.url, 'POST', '/collections', { apiKey: server.apiKey, body: { name: 'Issue 12-01', readable_id: 'issue12-01' } })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await Promise.all([legit?.close(), otherHost?.close(), attacker?.close(), dbAttacker?.close(), database?.drop()]);
    rmSync(root, { recursive: true, force: true });
  });

  const createGit = async () => {
    const created = await http(server.url, 'POST', '/source-connections', {
      apiKey: server.apiKey,
      body: { short_name: 'git', readable_collection_id: 'issue12-01', name: 'private repo', config: { url: `${legit.url}/repo`, branch: 'main' }, authentication: { credentials: { token: storedToken } }, sync_immediately: false },
    });
    expect(created.status).toBe(200);
    return created.body.id as string;
  };
  const patch = (id: string, body: unknown, auth: { apiKey?: string; token?: string }) => http(server.url, 'PATCH', `/source-connections/${id}`, { ...auth, body });
  const stored = async (id: string) => (await http(server.url, 'GET', `/source-connections/${id}`, { apiKey: server.apiKey })).body;

  test('git over REST: a member cannot retarget (403), an admin must resend the credentials (422); the attacker sees nothing and nothing changes', async () => {
    const id = await createGit();
    const toAttacker = { config: { url: `${attacker.url}/x.git`, branch: 'main' } };

    const byMember = await patch(id, { ...toAttacker, name: 'renamed by the refused request' }, { token: member });
    expect(byMember.status).toBe(403);
    expect(byMember.body.detail).toMatch(/config or credentials needs the admin role/);

    for (const auth of [{ apiKey: server.apiKey }, { token: admin }]) {
      const byAdmin = await patch(id, { ...toAttacker, name: 'renamed by the refused request' }, auth);
      expect(byAdmin.status).toBe(422);
      expect(byAdmin.body.detail).toEqual([
        { loc: ['body', 'authentication', 'credentials'], msg: expect.stringContaining(`stored credentials to ${attacker.url}`), type: 'credentials_required' },
      ]);
    }
    // Another scheme on the same host and port is another target too (a downgrade would expose the token).
    expect((await patch(id, { config: { url: `${legit.url.replace('http:', 'https:')}/repo` } }, { apiKey: server.apiKey })).status).toBe(422);

    expect(attacker.requests).toEqual([]);
    const after = await stored(id);
    expect(after.config.url).toBe(`${legit.url}/repo`);
    expect(after.name).toBe('private repo');
  });

  test('git over GraphQL: the same refusals, with FORBIDDEN and BAD_USER_INPUT', async () => {
    const id = await createGit();
    const input = { config: { url: `${attacker.url}/x.git` } };
    const byMember = await graphql(server.url, UPDATE, { id, input }, { token: member });
    expect(byMember.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const byKey = await graphql(server.url, UPDATE, { id, input }, { apiKey: server.apiKey });
    expect(byKey.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', detail: [{ loc: ['authentication', 'credentials'], type: 'credentials_required' }] });
    expect(attacker.requests).toEqual([]);
    expect((await stored(id)).config.url).toBe(`${legit.url}/repo`);
  });

  test('members keep renaming, describing and scheduling; an admin may move within the origin without credentials, and to a new host with them', async () => {
    const id = await createGit();
    const renamed = await patch(id, { name: 'Renamed by a member', description: 'ok', schedule: { cron: '0 3 * * *' } }, { token: member });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed by a member', description: 'ok', schedule: { cron: '0 3 * * *' } });

    legit.authorizations.length = 0;
    const sameOrigin = await patch(id, { config: { url: `${legit.url}/repo2`, branch: 'main' } }, { token: admin });
    expect(sameOrigin.status).toBe(200);
    expect(legit.authorizations).toContain(basic(storedToken));

    const moved = await patch(id, { config: { url: `${otherHost.url}/repo`, branch: 'main' }, authentication: { credentials: { token: newToken } } }, { token: admin });
    expect(moved.status).toBe(200);
    expect(moved.body.config.url).toBe(`${otherHost.url}/repo`);
    expect(otherHost.authorizations).toContain(basic(newToken));
    expect(otherHost.authorizations).not.toContain(basic(storedToken));
    // The new token is now the stored one, bound to the new host: going back needs credentials again.
    expect((await patch(id, { config: { url: `${legit.url}/repo` } }, { token: admin })).status).toBe(422);
    expect(attacker.requests).toEqual([]);
  });

  test('postgresql: a member can change neither the database address nor the config; the attacker database sees no connection', async () => {
    const created = await http(server.url, 'POST', '/source-connections', {
      apiKey: server.apiKey,
      body: { short_name: 'postgresql', readable_collection_id: 'issue12-01', config: { tables: ['notes'] }, authentication: { credentials: { url: database.url } }, sync_immediately: false },
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    const retarget = { authentication: { credentials: { host: '127.0.0.1', port: dbAttacker.port, database: 'stolen', user: 'postgres' } } };
    expect((await patch(id, retarget, { token: member })).status).toBe(403);
    expect((await graphql(server.url, UPDATE, { id, input: retarget }, { token: member })).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await patch(id, { config: { tables: [] } }, { token: member })).status).toBe(403);
    expect(dbAttacker.seen.connections).toBe(0);
    expect((await stored(id)).config.tables).toEqual(['notes']);

    // An admin's new address comes with its own credentials (they replace the stored ones, password included);
    // a server that drops the connection is a 422 on those credentials, not a 500, and nothing is stored.
    const byAdmin = await patch(id, { ...retarget, name: 'not stored' }, { token: admin });
    expect(byAdmin.status).toBe(422);
    expect(byAdmin.body.detail).toEqual([{ loc: ['body', 'authentication', 'credentials'], msg: expect.stringMatching(/^Cannot reach the PostgreSQL server at 127\.0\.0\.1:/), type: 'source_unreachable' }]);
    expect(dbAttacker.seen.connections).toBe(1);
    expect((await stored(id)).name).not.toBe('not stored');
  });

  test('the connectors declare their targets: normalized origins and server addresses, never a secret', () => {
    const targets = (url: string) => gitConnector.credentialTargets(parsedConfig(gitConnector, { url }), {});
    expect(targets('HTTPS://Git.Example.com:443/team/a.git')).toEqual(['https://git.example.com']);
    expect(targets('https://git.example.com/other/b')).toEqual(['https://git.example.com']);
    expect(targets('/srv/repos/local')).toEqual([]);
    const postgresqlTargets = (credentials: Record<string, unknown>) => postgresqlConnector.credentialTargets(parsedConfig(postgresqlConnector, {}), parsedCredentials(postgresqlConnector, credentials));
    const address = postgresqlTargets({ url: 'postgresql://app:s3cret-pw@DB.internal/sales' });
    expect(address).toEqual(['postgresql://db.internal:5432/sales']);
    expect(postgresqlTargets({ host: 'db.internal', port: 5432, database: 'sales', user: 'app', password: 's3cret-pw' })).toEqual(address);
    expect(JSON.stringify(address)).not.toContain('s3cret');
  });
});
