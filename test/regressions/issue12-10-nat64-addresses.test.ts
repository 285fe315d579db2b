import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectionContext, connectorEnvironment, rejection } from '../../src/connectors/connector-testing.js';
import git from '../../src/connectors/git/index.js';
import { WebClient } from '../../src/platform/http/web-client.js';
import { RefusedTargetError } from '../../src/shared/target-guard.js';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';

/**
 * Issue 12, finding 10: NAT64 (`64:ff9b::/96`) and IPv4-compatible (`::a.b.c.d`) addresses passed the
 * address guard as public, though a translator on the way delivers them to the IPv4 address they
 * embed (169.254.169.254, 127.0.0.1, …). They, and SIIT, 6to4 and Teredo forms, now get the rules of
 * that IPv4 address: webhook targets, web sources (redirects included) and git repositories.
 */
const METADATA_FORMS = ['64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '::a9fe:a9fe', '::169.254.169.254', '::ffff:0:a9fe:a9fe', '2002:a9fe:a9fe::1'];

describe('issue 12-10: IPv6 forms of IPv4 addresses get the IPv4 rules', () => {
  let server: TestServer;
  let token: string;
  let redirector: Server;
  let redirectorUrl: string;
  let redirectTo = '';

  beforeAll(async () => {
    // The operator's defaults: HTTPS webhooks to public addresses only.
    server = await startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0' } });
    const orgId = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    token = (await server.running.core.services.auth.issueToken({ organizationId: orgId, email: 'admin@example.com', role: 'admin' })).access_token;
    redirector = createServer((_request, response) => void response.writeHead(302, { location: redirectTo }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/`;
  }, 60_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => redirector?.close(() => resolve()));
    await server?.stop();
  });

  test('a webhook subscription to any of them is a 422, as for the IPv4 address itself', async () => {
    for (const address of [...METADATA_FORMS, '64:ff9b::7f00:1', '::7f00:1', '64:ff9b::a00:1']) {
      const response = await http(server.url, 'POST', '/webhooks/subscriptions', { token, body: { url: `https://[${address}]/hook`, event_types: ['collection.created'] } });
      expect([address, response.status]).toEqual([address, 422]);
      expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'url'], msg: expect.stringMatching(/private, loopback or link-local address/) })]);
    }
    // The NAT64 form of a public address stays public.
    const accepted = await http(server.url, 'POST', '/webhooks/subscriptions', { token, body: { url: 'https://[64:ff9b::808:808]/hook', event_types: ['collection.created'] } });
    expect(accepted.status).toBe(200);
  });

  test('a web source is refused before connecting, when a page redirects to one (link-local: even with intranets allowed)', async () => {
    const client = new WebClient({ allowPrivateNetworks: true });
    try {
      for (const address of METADATA_FORMS) {
        redirectTo = `http://[${address}]/latest/meta-data/`;
        const error = await rejection(client.get(redirectorUrl, { headers: {}, signal: AbortSignal.timeout(10_000) }));
        expect([address, (error as Error & { cause?: unknown }).cause]).toEqual([address, expect.any(RefusedTargetError)]);
        expect(String((error as Error & { cause?: Error }).cause?.message)).toMatch(/link-local address/);
      }
    } finally {
      await client.close();
    }
  });

  test('a git repository at one of them is refused at validation', async () => {
    for (const address of METADATA_FORMS) {
      const error = await rejection(git.validate(connectionContext(git, { config: { url: `https://[${address}]/latest/repo.git` }, credentials: {} }), connectorEnvironment([])));
      expect([address, error]).toMatchObject([address, { field: 'url', message: expect.stringMatching(/link-local address/) }]);
    }
  });
});
