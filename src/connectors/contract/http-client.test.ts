import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { capturingLogger } from '../../../test/support/capturing-logger.js';
import type { Connector } from '../connector.js';
import { emptyConnector, rejection } from '../connector-testing.js';
import type { AuthHeaders, ConnectorAuth } from './auth.js';
import { CredentialsRejectedError, SourceRateLimitedError, SourceHttpError, SourceUnreachableError, TemporarilyUnavailableError } from './errors.js';
import { createSourceHttpClient, SourceResponseTooLargeError, type SourceHttpClientOptions } from './http-client.js';
import type { RequestRate, TokenProvider } from './source-http.js';
import { closeLoopback, listenOnLoopback } from '../../platform/http/test-loopback-server.js';

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback API whose answers each test scripts, recording what it received. */
class ScriptedApi {
  private server!: Server;
  received: Received[] = [];
  handler: (request: Received, response: ServerResponse) => void = (_request, response) => response.end('{}');

  origin = '';

  async start(): Promise<this> {
    this.server = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const received = { method: request.method!, path: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      this.received.push(received);
      this.handler(received, response);
    });
    this.origin = await listenOnLoopback(this.server);
    return this;
  }

  stop(): Promise<void> {
    return closeLoopback(this.server);
  }
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

const PASTED = 'pasted-token-0123456789';

function testConnector(api: () => ScriptedApi, overrides: { auth?: ConnectorAuth; authHeaders?: AuthHeaders; requestRate?: RequestRate } = {}): Connector {
  return emptyConnector({
    shortName: 'scripted',
    description: 'A loopback API for the HTTP client tests',
    auth: overrides.auth ?? {
      kind: 'oauth2',
      oauth: { authorizeUrl: () => `${api().origin}/authorize`, tokenUrl: () => `${api().origin}/token`, scopes: [], pkce: false, refresh: 'refresh', clientAuthentication: 'basic' },
      pasted: { credentials: z.object({ token: z.string() }), token: (credentials: { token: string }) => credentials.token },
    },
    authHeaders: overrides.authHeaders,
    requestRate: overrides.requestRate,
    credentialTargets: () => [api().origin],
  });
}

/** A token provider whose refresh hands out the next token of a list, recording what it was told was rejected. */
function scriptedTokens(first: string, refreshed: string[]) {
  let current = first;
  const rejected: string[] = [];
  const provider: TokenProvider = {
    accessToken: async () => current,
    refreshAfterRejection: async (token) => {
      rejected.push(token);
      const next = refreshed.shift();
      if (!next) throw new CredentialsRejectedError('The refresh was refused');
      current = next;
      return next;
    },
  };
  return { provider, rejected };
}

describe('createSourceHttpClient against a local HTTP server', () => {
  let api: ScriptedApi;
  let elsewhere: ScriptedApi;
  let sleeps: number[];
  /** The client's clock: it moves only by the waits the client asks for, so each wait is exactly what the rules give. */
  let clock: number;
  const capture = capturingLogger();
  const client = (overrides: Partial<SourceHttpClientOptions> = {}, connector = testConnector(() => api)) =>
    createSourceHttpClient({
      connector,
      config: {},
      credentials: { token: PASTED },
      tokens: null,
      allowPrivateNetworks: true,
      signal: new AbortController().signal,
      logger: capture.logger,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
      now: () => clock,
      ...overrides,
    });

  beforeAll(async () => {
    api = await new ScriptedApi().start();
    elsewhere = await new ScriptedApi().start();
  });
  afterAll(async () => {
    await api.stop();
    await elsewhere.stop();
  });
  beforeEach(() => {
    api.received = [];
    elsewhere.received = [];
    api.handler = (_request, response) => json(response, 200, { ok: true });
    elsewhere.handler = (_request, response) => json(response, 200, { elsewhere: true });
    sleeps = [];
    // A whole second, as HTTP dates and x-ratelimit-reset have.
    clock = Date.UTC(2026, 10, 24, 2, 0, 0);
  });

  test('GET with the query appended, the user agent, and the pasted token as a Bearer to the credential target', async () => {
    const answer = await client().getJson<{ ok: boolean }>(`${api.origin}/items?state=open`, { query: { page: 2, since: undefined, all: true } });
    expect(answer).toMatchObject({ status: 200, body: { ok: true }, url: `${api.origin}/items?state=open&page=2&all=true` });
    const [sent] = api.received;
    expect(sent!.path).toBe('/items?state=open&page=2&all=true');
    expect(sent!.headers['user-agent']).toBe('Catchment');
    expect(sent!.headers.accept).toBe('application/json');
    expect(sent!.headers.authorization).toBe(`Bearer ${PASTED}`);
  });

  test("POST sends JSON; the connector's authHeaders say how the token goes (Linear-style API key)", async () => {
    const connector = testConnector(() => api, { authHeaders: (token, origin) => ({ authorization: origin === 'pasted' ? token : `Bearer ${token}` }) });
    api.handler = (request, response) => json(response, 200, { echoed: JSON.parse(request.body) });
    const answer = await client({}, connector).postJson<{ echoed: unknown }>(`${api.origin}/graphql`, { query: '{ viewer { id } }' });
    expect(answer.body.echoed).toEqual({ query: '{ viewer { id } }' });
    expect(api.received[0]!.headers['content-type']).toBe('application/json');
    expect(api.received[0]!.headers.authorization).toBe(PASTED);
  });

  test('the token goes only to credential targets: not to another origin, nor to a redirect leading there', async () => {
    await client().getJson(`${elsewhere.origin}/public`);
    expect(elsewhere.received[0]!.headers.authorization).toBeUndefined();
    api.handler = (_request, response) => {
      response.writeHead(302, { location: `${elsewhere.origin}/download?signed=1` });
      response.end();
    };
    const answer = await client().getBytes(`${api.origin}/files/1/content`);
    expect(api.received[0]!.headers.authorization).toBe(`Bearer ${PASTED}`);
    expect(elsewhere.received[1]!.path).toBe('/download?signed=1');
    expect(elsewhere.received[1]!.headers.authorization).toBeUndefined();
    expect(answer.url).toBe(`${elsewhere.origin}/download?signed=1`);
    expect(JSON.parse(answer.bytes.toString('utf8'))).toEqual({ elsewhere: true });
  });

  test('OAuth: a 401 refreshes once (telling which token was refused) and retries with the new token', async () => {
    const { provider, rejected } = scriptedTokens('access-old', ['access-new']);
    api.handler = (request, response) => (request.headers.authorization === 'Bearer access-new' ? json(response, 200, { ok: true }) : json(response, 401, { message: 'Bad credentials' }));
    const answer = await client({ tokens: provider, credentials: null }).getJson(`${api.origin}/user`);
    expect(answer.body).toEqual({ ok: true });
    expect(rejected).toEqual(['access-old']);
    expect(api.received.map((request) => request.headers.authorization)).toEqual(['Bearer access-old', 'Bearer access-new']);
  });

  test('OAuth: a 401 again after the refresh is CredentialsRejectedError, without the token in the message or the logs', async () => {
    const { provider, rejected } = scriptedTokens('access-old', ['access-new-but-refused']);
    api.handler = (_request, response) => json(response, 401, { message: 'Bad credentials' });
    const error = await rejection(client({ tokens: provider, credentials: null }).getJson(`${api.origin}/user`));
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect(rejected).toEqual(['access-old']);
    expect(api.received).toHaveLength(2);
    expect(error.message).not.toContain('access-');
    expect(capture.raw.join('')).not.toContain('access-');
  });

  test('a pasted token refused (401) is CredentialsRejectedError at once; a 401 from elsewhere is a plain HTTP error', async () => {
    api.handler = (_request, response) => json(response, 401, { message: 'Bad credentials' });
    const error = await rejection(client().getJson(`${api.origin}/user`));
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect(error.message).not.toContain(PASTED);
    expect(api.received).toHaveLength(1);
    elsewhere.handler = (_request, response) => json(response, 401, { message: 'Requires authentication' });
    const plain = await rejection(client().getJson(`${elsewhere.origin}/private`));
    expect(plain).toBeInstanceOf(SourceHttpError);
    expect((plain as SourceHttpError).status).toBe(401);
  });

  test('429 with Retry-After in seconds, then as an HTTP date: the waits are the ones asked for', async () => {
    let calls = 0;
    const resetAt = new Date(clock + 30_000);
    api.handler = (_request, response) => {
      calls++;
      if (calls === 1) return json(response, 429, { message: 'slow down' }, { 'retry-after': '7' });
      if (calls === 2) return json(response, 429, { message: 'slow down' }, { 'retry-after': resetAt.toUTCString() });
      json(response, 200, { ok: true });
    };
    const answer = await client().getJson(`${api.origin}/issues`);
    expect(answer.body).toEqual({ ok: true });
    // An HTTP date is a point in time: the wait is what remained until then when the answer came, 7 s later.
    expect(sleeps).toEqual([7000, 23_000]);
  });

  test("GitHub's rate-limit 403 (x-ratelimit-remaining: 0) waits until x-ratelimit-reset; a 403 without it is an HTTP error", async () => {
    let calls = 0;
    api.handler = (_request, response) => {
      calls++;
      if (calls > 1) return json(response, 200, { ok: true });
      const reset = clock / 1000 + 20;
      json(response, 403, { message: 'API rate limit exceeded' }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) });
    };
    await client().getJson(`${api.origin}/repos`);
    expect(sleeps).toEqual([20_000]);
    api.handler = (_request, response) => json(response, 403, { message: 'Resource not accessible by integration' });
    const error = await rejection(client().getJson(`${api.origin}/repos/secret`));
    expect(error).toBeInstanceOf(SourceHttpError);
    expect(error.message).toContain('Resource not accessible by integration');
  });

  test('a rate limit longer than a request may wait is SourceRateLimitedError with the wait, sent once', async () => {
    api.handler = (_request, response) => json(response, 429, { message: 'slow down' }, { 'retry-after': '3600' });
    const error = await rejection(client().getJson(`${api.origin}/issues`));
    expect(error).toBeInstanceOf(SourceRateLimitedError);
    expect((error as SourceRateLimitedError).retryAfterSeconds).toBe(3600);
    expect(api.received).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  test('5xx is retried with growing, jittered backoff, then TemporarilyUnavailableError after five sends', async () => {
    api.handler = (_request, response) => json(response, 503, { message: 'unavailable' });
    const error = await rejection(client().getJson(`${api.origin}/issues`));
    expect(error).toBeInstanceOf(TemporarilyUnavailableError);
    expect(api.received).toHaveLength(5);
    expect(sleeps).toHaveLength(4);
    sleeps.forEach((wait, index) => {
      const step = 1000 * 2 ** index;
      expect(wait).toBeGreaterThanOrEqual(step / 2);
      expect(wait).toBeLessThanOrEqual(step);
    });
  });

  test('a connection dropped without an answer is retried', async () => {
    let calls = 0;
    api.handler = (_request, response) => {
      calls++;
      if (calls === 1) return response.socket?.destroy();
      json(response, 200, { ok: true });
    };
    const answer = await client().getJson(`${api.origin}/issues`);
    expect(answer.body).toEqual({ ok: true });
    expect(sleeps).toHaveLength(1);
  });

  test("requests are paced at the connector's rate after its burst", async () => {
    const connector = testConnector(() => api, { requestRate: { requestsPerSecond: 10, burst: 2 } });
    const paced = client({}, connector);
    for (let index = 0; index < 5; index++) await paced.getJson(`${api.origin}/items/${index}`);
    // Two go at once (the burst); each of the other three waits for its slot, 100 ms after the one before.
    expect(sleeps).toEqual([100, 100, 100]);
    expect(api.received).toHaveLength(5);
  });

  test('statuses: 404 thrown with an excerpt unless accepted; a body that is not JSON is an HTTP error; bodies are capped', async () => {
    api.handler = (_request, response) => json(response, 404, { message: 'Not Found' });
    const missing = await rejection(client().getJson(`${api.origin}/gone?token=x`));
    expect(missing).toBeInstanceOf(SourceHttpError);
    expect(missing.message).toBe(`404 from ${api.origin}/gone: {"message":"Not Found"}`);
    const accepted = await client().getJson(`${api.origin}/gone`, { acceptStatuses: [404] });
    expect(accepted.status).toBe(404);
    api.handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>maintenance</html>');
    };
    expect(await rejection(client().getJson(`${api.origin}/items`))).toBeInstanceOf(SourceHttpError);
    api.handler = (_request, response) => response.end(Buffer.alloc(100, 'a'));
    expect(await rejection(client().getBytes(`${api.origin}/file`, { maxBytes: 10 }))).toBeInstanceOf(SourceResponseTooLargeError);
    expect((await client().getBytes(`${api.origin}/file`, { maxBytes: 100 })).bytes).toHaveLength(100);
  });

  test("the job's cancellation stops a request waiting to retry", async () => {
    const controller = new AbortController();
    api.handler = (_request, response) => json(response, 503, {});
    const cancelled = client({ signal: controller.signal, sleep: async () => controller.abort(new Error('Cancelled')) }).getJson(`${api.origin}/issues`);
    const error = await rejection(cancelled);
    expect(error.message).toBe('Cancelled');
    expect(api.received).toHaveLength(1);
  });

  test('the address guard: loopback is refused unless private networks are allowed, before anything is sent', async () => {
    const error = await rejection(client({ allowPrivateNetworks: false }).getJson(`${api.origin}/issues`));
    expect(error).toBeInstanceOf(SourceUnreachableError);
    expect(error.message).toContain('private, loopback or link-local');
    expect(api.received).toHaveLength(0);
  });
});
