import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from 'graphql-sse';
import { startTestServer, type TestServer } from './support/harness.js';
import { api, FAST_WORKER, waitForJob, type Api } from './support/sync-helpers.js';

interface JobUpdate {
  status: string;
  entitiesInserted: number;
  entitiesTotal: number | null;
}

const PROGRESS = 'subscription($jobId: ID!) { syncJobProgress(jobId: $jobId) { status entitiesInserted entitiesTotal } }';

describe('syncJobProgress: progress while a batch is read, and the stream ends with its job', () => {
  let server: TestServer;
  let call: Api;
  let root: string;

  /** Follows a job's stream until it completes; rejects if it is still open after `timeoutMs`. */
  const follow = (jobId: string, timeoutMs = 20_000) => {
    const client = createClient({ url: `${server.url}/graphql/stream`, headers: { 'x-api-key': server.apiKey }, retryAttempts: 0 });
    const updates: JobUpdate[] = [];
    const ended = new Promise<JobUpdate[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stream still open after ${timeoutMs} ms; saw ${JSON.stringify(updates)}`)), timeoutMs);
      client.subscribe<{ syncJobProgress: JobUpdate }>(
        { query: PROGRESS, variables: { jobId } },
        {
          next: (result) => result.data && updates.push(result.data.syncJobProgress),
          error: (error) => (clearTimeout(timer), reject(error)),
          complete: () => (clearTimeout(timer), resolve(updates)),
        },
      );
    });
    return ended.finally(() => client.dispose());
  };

  beforeAll(async () => {
    // One batch holds the whole run (500 entities), so per-batch progress would say nothing until the end.
    root = mkdtempSync(path.join(tmpdir(), 'catchment-total-'));
    server = await startTestServer({ deployment: 'embedded', env: { ...FAST_WORKER, CATCHMENT_SYNC_BATCH_SIZE: '500', CATCHMENT_LOCAL_FOLDER_ROOTS: root } });
    call = api(server.url, server.apiKey);
    await call('POST', '/collections', { name: 'Slow', readable_id: 'slow' });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a slow source shows counts rising within one batch, and the stream closes when the job completes', async () => {
    const connection = (
      await call('POST', '/source-connections', {
        short_name: 'stub',
        readable_collection_id: 'slow',
        authentication: { credentials: { token: 't' } },
        config: { entity_count: 40, delay_ms: 50, hierarchy_depth: 0, size_mix: 'small' },
        sync_immediately: false,
      })
    ).body;
    const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    const updates = await follow(job.id);
    expect(updates.at(-1)).toEqual({ status: 'COMPLETED', entitiesInserted: 40, entitiesTotal: 40 });
    const partial = new Set(updates.filter((u) => u.status === 'RUNNING' && u.entitiesInserted > 0 && u.entitiesInserted < 40).map((u) => u.entitiesInserted));
    expect(partial.size).toBeGreaterThanOrEqual(3);
    // The stub knows its entity count before it yields anything: every progress update carries it.
    expect(updates.filter((u) => u.status === 'RUNNING' && u.entitiesInserted > 0).every((u) => u.entitiesTotal === 40)).toBe(true);
    const [restJob] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    expect(restJob).toMatchObject({ id: job.id, entities_total: 40 });
    const graphql = await call('POST', '/graphql', { query: 'query($id: ID!) { syncJobs(sourceConnectionId: $id) { id entitiesTotal } }', variables: { id: connection.id } });
    expect(graphql.body.data.syncJobs).toEqual([{ id: job.id, entitiesTotal: 40 }]);
  });

  test('a local folder reports its listed files and the folders holding them as the total', async () => {
    const folder = path.join(root, 'docs');
    mkdirSync(path.join(folder, 'guides'), { recursive: true });
    writeFileSync(path.join(folder, 'readme.md'), '# Readme\nHow to start.\n');
    writeFileSync(path.join(folder, 'guides', 'setup.md'), '# Setup\nInstall it.\n');
    writeFileSync(path.join(folder, 'guides', 'usage.txt'), 'Use it daily.\n');
    mkdirSync(path.join(folder, 'empty'));
    const connection = (
      await call('POST', '/source-connections', { short_name: 'local_folder', readable_collection_id: 'slow', config: { path: folder }, sync_immediately: false })
    ).body;
    const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    const updates = await follow(job.id);
    // Three files and the one folder holding some; the empty folder is not yielded, so not counted.
    expect(updates.at(-1)).toEqual({ status: 'COMPLETED', entitiesInserted: 4, entitiesTotal: 4 });
    const [restJob] = (await call('GET', `/source-connections/${connection.id}/jobs`)).body;
    expect(restJob.entities_total).toBe(4);
  });

  test('a job already finished is sent once and its stream ends at once', async () => {
    const connection = (await call('GET', '/source-connections?collection=slow')).body.find((c: { short_name: string }) => c.short_name === 'stub');
    const job = (await call('POST', `/source-connections/${connection.id}/run`)).body;
    await waitForJob(call, connection.id, job.id, ['COMPLETED']);
    const updates = await follow(job.id, 5_000);
    // An incremental stub run does not know its size in advance.
    expect(updates).toEqual([{ status: 'COMPLETED', entitiesInserted: 0, entitiesTotal: null }]);
  });
});
