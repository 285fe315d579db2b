import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { nextScheduledRun, shortestInterval } from '../../src/modules/sync/schedule.js';
import { graphql, http, startTestServer, type TestServer } from '../support/harness.js';

/**
 * Issue 12, finding 9: a connection accepted the cron `* * * * * *`, a sync every second forever.
 * A schedule must now leave CATCHMENT_SCHEDULE_MIN_INTERVAL_SECONDS (60 by default) between any two
 * runs; tighter ones are a 422 at `["body", "schedule", "cron"]` (REST) or BAD_USER_INPUT (GraphQL).
 */

describe('issue 12-09: cron schedules have a minimum interval', () => {
  let server: TestServer;
  let tight: TestServer;
  const createStub = (target: TestServer, cron: string) =>
    http(target.url, 'POST', '/source-connections', {
      apiKey: target.apiKey,
      body: { short_name: 'stub', readable_collection_id: 'issue12-09', authentication: { credentials: { token: 't' } }, config: { entity_count: 1 }, sync_immediately: false, schedule: { cron } },
    });

  beforeAll(async () => {
    const env = { CATCHMENT_RATE_LIMIT_REQUESTS: '0' };
    [server, tight] = await Promise.all([
      startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env }),
      startTestServer({ deployment: 'servers', roles: { api: true, worker: false }, env: { ...env, CATCHMENT_SCHEDULE_MIN_INTERVAL_SECONDS: '3600' } }),
    ]);
    for (const target of [server, tight]) {
      expect((await http(target.url, 'POST', '/collections', { apiKey: target.apiKey, body: { name: 'Issue 12-09', readable_id: 'issue12-09' } })).status).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all([server?.stop(), tight?.stop()]);
  });

  test.each([
    ['* * * * * *', 1],
    ['*/30 * * * * *', 30],
    ['0,59 * * * * *', 1], // 59 s apart within a minute, but 1 s across the minute
    ['* 0 * * * *', 1], // every second, during one minute an hour
    ['0 0,1 3 * * *', 60], // two runs a minute apart, once a day
  ])('the shortest interval of %s is %i seconds', (cron, seconds) => {
    expect(shortestInterval(cron, new Date('2026-03-01T12:00:00Z'))).toBe(seconds);
  });

  test('REST: a cron firing more often than the minimum is a 422 at body.schedule.cron, on create and on update', async () => {
    for (const cron of ['* * * * * *', '*/30 * * * * *', '0,59 * * * * *', '* 0 * * * *']) {
      const refused = await createStub(server, cron);
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toEqual([{ loc: ['body', 'schedule', 'cron'], msg: expect.stringMatching(/at least 60 seconds between runs/), type: 'value_error' }]);
    }
    const hourly = await createStub(server, '0 * * * *');
    expect(hourly.status).toBe(200);
    expect(hourly.body.schedule.cron).toBe('0 * * * *');
    const everyMinute = await http(server.url, 'PATCH', `/source-connections/${hourly.body.id}`, { apiKey: server.apiKey, body: { schedule: { cron: '* * * * *' } } });
    expect(everyMinute.status).toBe(200); // exactly the minimum
    const everySecond = await http(server.url, 'PATCH', `/source-connections/${hourly.body.id}`, { apiKey: server.apiKey, body: { schedule: { cron: '* * * * * *' } } });
    expect(everySecond.status).toBe(422);
    expect(everySecond.body.detail[0].loc).toEqual(['body', 'schedule', 'cron']);
    const kept = await http(server.url, 'GET', `/source-connections/${hourly.body.id}`, { apiKey: server.apiKey });
    expect(kept.body.schedule.cron).toBe('* * * * *');
  });

  test('GraphQL: the same rule, as BAD_USER_INPUT with the issue at schedule.cron', async () => {
    const created = await graphql(
      server.url,
      'mutation ($input: SourceConnectionCreateInput!) { createSourceConnection(input: $input) { id } }',
      { input: { shortName: 'stub', readableCollectionId: 'issue12-09', authentication: { credentials: { token: 't' } }, config: { entity_count: 1 }, syncImmediately: false, schedule: { cron: '*/5 * * * * *' } } },
      { apiKey: server.apiKey },
    );
    expect(created.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', detail: [{ loc: ['schedule', 'cron'], type: 'value_error' }] });
  });

  test('the minimum is configurable: with 3600 seconds an every-minute schedule is refused and an hourly one accepted', async () => {
    const everyMinute = await createStub(tight, '* * * * *');
    expect(everyMinute.status).toBe(422);
    expect(everyMinute.body.detail[0].msg).toMatch(/runs every 60 seconds at times; schedules must leave at least 3600 seconds/);
    expect((await createStub(tight, '0 * * * *')).status).toBe(200);
  });

  test('a schedule saved before the rule fires no more often than the minimum; others keep their times', () => {
    const due = new Date('2026-03-01T12:00:00Z');
    const justAfter = new Date('2026-03-01T12:00:01Z');
    // Every second, saved before the minimum existed: the worker's next run is a minute after the one due.
    expect(nextScheduledRun('* * * * * *', due, justAfter, 60)!.toISOString()).toBe('2026-03-01T12:01:00.000Z');
    // An hourly schedule keeps its hour, and one ticked late runs at its next time after now.
    expect(nextScheduledRun('0 * * * *', due, justAfter, 60)!.toISOString()).toBe('2026-03-01T13:00:00.000Z');
    expect(nextScheduledRun('* * * * *', due, new Date('2026-03-01T12:05:30Z'), 60)!.toISOString()).toBe('2026-03-01T12:06:00.000Z');
    // Exactly the minimum apart: not pushed back by a whole run.
    expect(nextScheduledRun('* * * * *', due, justAfter, 60)!.toISOString()).toBe('2026-03-01T12:01:00.000Z');
  });
});
