import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { emptyConnector } from '../../src/connectors/connector-testing.js';
import { SourceHttpError } from '../../src/connectors/contract/errors.js';
import { createSourceHttpClient } from '../../src/connectors/contract/http-client.js';
import { capturingLogger } from '../support/capturing-logger.js';

const TOKEN = 'gho_secretToken0123456789abcdefABCDEF';

/**
 * Issue 16, finding 3: a source's error answer is quoted in the error (its first 300 characters),
 * which becomes the job's error that every member reads. An API, gateway or debugging proxy that
 * echoes the request in its error (httpbin-style, or `"headers": {"Authorization": …}` in a 400) put
 * the connection's token there. The excerpt now leaves out the token the request was sent with.
 */
describe('issue 16-03: error excerpts never quote the token (against a local API that echoes its request headers in errors)', () => {
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Bad request', headers: request.headers }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connector = emptyConnector({
    shortName: 'echoing',
    description: 'An API that echoes requests in its errors',
    auth: { kind: 'fields', credentials: z.object({ token: z.string() }) },
    credentialTargets: () => [origin],
  });
  const client = () =>
    createSourceHttpClient({
      connector,
      config: {},
      credentials: { token: TOKEN },
      tokens: { accessToken: async () => TOKEN, refreshAfterRejection: async () => TOKEN },
      allowPrivateNetworks: true,
      signal: new AbortController().signal,
      logger: capturingLogger().logger,
    });

  test('a 400 quoting the request headers: the error says 400 and quotes the answer without the token', async () => {
    const error = await client()
      .getJson(`${origin}/echo`)
      .then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(SourceHttpError);
    const message = (error as SourceHttpError).message;
    expect(message).toContain('400');
    expect(message).toContain('Bad request');
    expect(message).toContain('[token]');
    expect(message).not.toContain(TOKEN);
    expect(message).not.toContain(TOKEN.slice(0, 16));
  });
});
