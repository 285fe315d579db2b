import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SourceConfigError } from '../../src/connectors/connector.js';
import { collectRun, connectionContext, connectorEnvironment, rejection } from '../../src/connectors/connector-testing.js';
import connector from '../../src/connectors/git/index.js';
import { serveOverHttp, TestRepository } from '../../src/connectors/git/test-repository.js';

/**
 * Issue 12, finding 3: the `git` source followed HTTP redirects, so a repository URL answering 302
 * sent git (with the connection's token) to any address, 169.254.169.254 included, past the network
 * policy checked for the configured host. Git now follows no redirect (nor http-alternates) and
 * the token header is scoped to the configured URL. Here "elsewhere" is a real repository on
 * another loopback address (169.254.169.254 is not reachable on a test machine): before the fix,
 * git followed the redirect and synced it.
 */
describe('issue 12-03: git follows no redirect, so neither git nor its token leaves the configured host', () => {
  const token = 'ghp-redirect-test-secret';
  let root: string;
  let elsewhere: Awaited<ReturnType<typeof serveOverHttp>>;
  let redirector: Server;
  let redirectorUrl: string;
  const seenByRedirector: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(path.join(tmpdir(), 'issue12-03-')));
    new TestRepository(path.join(root, 'repo')).write('secret.md', 'Internal metadata that must stay unread.\n').commit('Elsewhere');
    elsewhere = await serveOverHttp(root, null, '127.0.0.2');
    redirector = createServer((request, response) => {
      seenByRedirector.push(request.headers);
      response.writeHead(302, { location: `${elsewhere.url}${request.url}` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => redirector.close(() => resolve()));
    await elsewhere.close();
    rmSync(root, { recursive: true, force: true });
  });

  const environment = () => connectorEnvironment([root]);

  test('validation reports the redirect as a config error; nothing reaches the redirect target', async () => {
    const error = await rejection(connector.validate(connectionContext(connector, { config: { url: `${redirectorUrl}/repo`, branch: 'main' }, credentials: { token } }), environment()));
    expect(error).toBeInstanceOf(SourceConfigError);
    expect(error).toMatchObject({ field: 'url', message: expect.stringMatching(/redirect \(HTTP 302\), which is not followed/) });
    expect(error.message).not.toContain(token);
    expect(seenByRedirector.length).toBeGreaterThan(0);
    // The token went to the configured URL only.
    expect(seenByRedirector[0]!.authorization).toBe(`Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`);
    expect(elsewhere.authorizations).toEqual([]);
  });

  test('a sync fails on the redirect and yields nothing from the redirect target', async () => {
    const before = seenByRedirector.length;
    const error = await rejection(collectRun(connector, { config: { url: `${redirectorUrl}/repo`, branch: 'main' }, credentials: { token }, environment: environment() }));
    expect(error.message).toMatch(/redirect \(HTTP 302\), which is not followed/);
    expect(seenByRedirector.length).toBeGreaterThan(before);
    expect(elsewhere.authorizations).toEqual([]);
  });

  test('the repository read directly at its own URL still syncs (the check is on redirects, not on the host)', async () => {
    const run = await collectRun(connector, { config: { url: `${elsewhere.url}/repo`, branch: 'main' }, environment: environment() });
    expect(run.ids).toContain('file:secret.md');
  });
});
