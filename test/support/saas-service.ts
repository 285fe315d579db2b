import { expect } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { SourceConnection } from '../../src/modules/connections/source-connection.entity.js';
import { capturingLogger } from './capturing-logger.js';
import { http, type HttpResult } from './harness.js';
import { FAST_WORKER, waitForJob } from './sync-helpers.js';

/** A job's outcome as the assertions compare it. */
export interface JobCounts {
  status: string;
  inserted: number;
  updated: number;
  deleted: number;
  error: string | null;
}

/** One search result, as far as these tests read it. */
export interface SearchHit {
  entity_id: string;
  name: string;
  breadcrumbs: { entity_id: string; name: string; entity_type: string }[];
  web_url: string;
}

/**
 * The service as a user meets it, for the SaaS sources' end-to-end tests: the embedded deployment
 * (PGlite, its own worker) on a loopback port, sources allowed to reach 127.0.0.1 (their fakes),
 * webhooks over plain HTTP (a local receiver), every log line captured and every response body kept,
 * so a test can show no secret reached either.
 */
export class SaasService {
  private readonly answers: string[] = [];
  private constructor(
    readonly running: RunningServer,
    private readonly apiKey: string,
    private readonly dataDir: string,
    private readonly logs: ReturnType<typeof capturingLogger>,
  ) {}

  static async start(): Promise<SaasService> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'catchment-saas-'));
    const apiKey = `ck_test_saas_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
    const logs = capturingLogger('debug');
    const config = loadConfig(
      {
        ...FAST_WORKER,
        PORT: '0',
        CATCHMENT_DATA_DIR: dataDir,
        CATCHMENT_BOOTSTRAP_API_KEY: apiKey,
        CATCHMENT_LOG_LEVEL: 'debug',
        CATCHMENT_SOURCES_ALLOW_PRIVATE_NETWORKS: 'true',
        CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true',
      },
      '/nonexistent/.env',
    );
    try {
      return new SaasService(await startServer(config, logs.logger), apiKey, dataDir, logs);
    } catch (error) {
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  }

  async stop(): Promise<void> {
    await this.running.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  get url(): string {
    return this.running.url;
  }

  /** Where providers send the browser back (what operator apps register as their redirect URI). */
  get callbackUrl(): string {
    return `${this.running.url}/oauth/callback`;
  }

  /** A REST call with the organization's API key; its answer is kept for `secretsExposed`. */
  async call(method: string, pathAndQuery: string, body?: unknown, auth: { token?: string } = {}): Promise<HttpResult<any>> {
    const result = await http(this.url, method, pathAndQuery, auth.token ? { token: auth.token, body } : { apiKey: this.apiKey, body });
    this.answers.push(typeof result.body === 'string' ? result.body : JSON.stringify(result.body));
    return result;
  }

  /** An operator registers the OAuth app of a source for the token endpoint it serves (as `catchment oauth-apps set` does). */
  async registerOperatorApp(shortName: string, app: { clientId: string; clientSecret: string; tokenUrl: string }): Promise<void> {
    await this.running.core.services.operatorApps.set(shortName, app);
  }

  /** An admin's bearer token (webhook subscriptions are an admin's). */
  async adminToken(): Promise<string> {
    const organizationId = this.running.bootstrapOrganizationId!;
    return (await this.running.core.services.auth.issueToken({ organizationId, email: 'admin@example.com', role: 'admin' })).access_token;
  }

  async createCollection(name: string): Promise<string> {
    const created = await this.call('POST', '/collections', { name });
    expect(created.status).toBe(200);
    return created.body.readable_id;
  }

  /** Creates a connection; the answer must be a 200. */
  async connect(body: Record<string, unknown>): Promise<any> {
    const created = await this.call('POST', '/source-connections', body);
    expect({ status: created.status, body: created.status === 200 ? null : created.body }).toEqual({ status: 200, body: null });
    return created.body;
  }

  /** The connection's only job (its first sync), once it ended. */
  async firstSync(connectionId: string): Promise<any> {
    const [job] = (await this.call('GET', `/source-connections/${connectionId}/jobs`)).body;
    expect(job).toBeDefined();
    return waitForJob((method, route, body) => this.call(method, route, body), connectionId, job.id, ['COMPLETED', 'FAILED', 'CANCELLED']);
  }

  /** Runs the connection again and waits for the job to end. */
  async sync(connectionId: string): Promise<any> {
    const started = await this.call('POST', `/source-connections/${connectionId}/run`);
    expect(started.status).toBe(200);
    return waitForJob((method, route, body) => this.call(method, route, body), connectionId, started.body.id, ['COMPLETED', 'FAILED', 'CANCELLED']);
  }

  /** The connection's entity counts by type, as GET /source-connections/{id} reports them. */
  async entityCounts(connectionId: string): Promise<Record<string, number>> {
    const connection = (await this.call('GET', `/source-connections/${connectionId}`)).body;
    return Object.fromEntries(Object.entries(connection.entities.by_type as Record<string, { count: number }>).map(([type, { count }]) => [type, count]));
  }

  /** Keyword search in a collection: the hits, best first. */
  async search(collection: string, query: string): Promise<SearchHit[]> {
    const response = await this.call('POST', `/collections/${collection}/search/instant`, { query, retrieval_strategy: 'keyword', limit: 5 });
    expect(response.status).toBe(200);
    return response.body.results;
  }

  /**
   * A browser signing in: opens `authUrl` (which must be the provider's authorization endpoint), the
   * user consents there (`approve` is the provider's consent screen: it takes the request's query and
   * gives the code it redirects with), and the browser follows the redirect to the service's callback
   * and on to the caller's page. Returns where the browser ended up.
   */
  async signInWithBrowser(authUrl: string, authorizeEndpoint: string, approve: (request: URLSearchParams) => string): Promise<URL> {
    const request = new URL(authUrl);
    expect(`${request.origin}${request.pathname}`).toBe(authorizeEndpoint);
    expect(request.searchParams.get('redirect_uri')).toBe(this.callbackUrl);
    const back = new URL(request.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', approve(request.searchParams));
    back.searchParams.set('state', request.searchParams.get('state')!);
    const landed = await fetch(back, { redirect: 'follow' });
    await landed.text();
    return new URL(landed.url);
  }

  /** The credentials sealed with a connection, opened (to know the tokens the service holds). */
  async storedCredentials(connectionId: string): Promise<unknown> {
    const connection = await this.running.core.database.orm.em.fork().findOneOrFail(SourceConnection, { id: connectionId });
    return JSON.parse(this.running.core.secretBox.open(connection.sealedCredentials!));
  }

  /** Which of `secrets` appear in a response body of the test or in a log line. */
  secretsExposed(secrets: string[]): { inResponses: string[]; inLogs: string[] } {
    const answers = this.answers.join('\n');
    const logged = this.logs.raw.join('');
    return { inResponses: secrets.filter((secret) => answers.includes(secret)), inLogs: secrets.filter((secret) => logged.includes(secret)) };
  }

  /** Log lines, to show the capture saw the runs. */
  get logLines(): number {
    return this.logs.lines.length;
  }
}

export const jobCounts = (job: Record<string, any>): JobCounts => ({
  status: job.status,
  inserted: job.entities_inserted,
  updated: job.entities_updated,
  deleted: job.entities_deleted,
  error: job.error ?? null,
});
