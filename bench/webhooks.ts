/**
 * Webhook delivery benchmark (servers deployment: PostgreSQL + Redis, API and worker in one process).
 * 10,000 collection events go to 3 subscriptions on loopback receivers; one receiver fails 30% of
 * first attempts (retried on the real schedule, 5 s later). Prints first-attempt latency p50/p95
 * (event committed → receiver got it), throughput, and checks that every message reached every
 * receiver.
 *
 *   npm run bench:webhooks -- [--events 10000] [--producers 4]
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { WebhookReceiver } from '../src/modules/webhooks/webhook-receiver.js';
import type { Principal } from '../src/modules/organizations/principal.js';
import { graphql, http, startTestServer } from '../test/support/harness.js';
import { percentile } from './stats.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '10000' }, producers: { type: 'string', default: '4' } } });
const EVENTS = Number(values.events);
const PRODUCERS = Number(values.producers);
const FAILING_SHARE = 0.3;

/** Deterministic per message: the same 30% fail their first attempt whatever the arrival order. */
const failsFirst = (id: string) => createHash('sha256').update(id).digest().readUInt32BE(0) / 2 ** 32 < FAILING_SHARE;

async function main() {
  const server = await startTestServer({
    deployment: 'servers',
    env: { CATCHMENT_RATE_LIMIT_REQUESTS: '0', CATCHMENT_WEBHOOKS_ALLOW_HTTP: 'true', CATCHMENT_WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', CATCHMENT_LOG_LEVEL: 'warn' },
  });
  const receivers = await Promise.all([WebhookReceiver.start('/a'), WebhookReceiver.start('/b'), WebhookReceiver.start('/flaky')]);
  const seen = new Set<string>();
  // Message ids each receiver answered 200 to.
  const succeeded = receivers.map(() => new Set<string>());
  receivers.forEach((receiver, index) => {
    const flaky = index === 2;
    receiver.behaviour = (delivery) => {
      const id = String(delivery.headers['webhook-id']);
      const failing = flaky && !seen.has(id) && failsFirst(id);
      if (flaky) seen.add(id);
      if (!failing) succeeded[index]!.add(id);
      return { status: failing ? 503 : 200 };
    };
  });
  try {
    const organizationId: string = (await graphql(server.url, '{ viewer { organization { id } } }', {}, { apiKey: server.apiKey })).body.data.viewer.organization.id;
    const { access_token: token } = await server.running.core.services.auth.issueToken({ organizationId, email: 'bench@example.com', role: 'admin' });
    for (const receiver of receivers) {
      const created = await http(server.url, 'POST', '/webhooks/subscriptions', { token, body: { url: receiver.url, event_types: ['collection.created'] } });
      if (created.status !== 200) throw new Error(`subscription refused: ${JSON.stringify(created.body)}`);
    }
    const principal: Principal = { kind: 'api_key', organizationId, apiKeyId: 'bench', role: 'admin', email: null };
    const collections = server.running.core.services.collections;

    console.log(`producing ${EVENTS} collection.created events with ${PRODUCERS} concurrent producers → 3 subscriptions …`);
    const started = performance.timeOrigin + performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        while (next < EVENTS) {
          const index = next++;
          await collections.create(principal, { name: `Bench collection ${index}` });
        }
      }),
    );
    const produced = performance.timeOrigin + performance.now();

    const orm = server.running.core.database.orm;
    const ids = (await orm.em.getConnection().execute<{ id: string }[]>(`select id from webhook_messages where event_type = 'collection.created'`)).map((row) => row.id);
    const deadline = Date.now() + 120_000;
    const complete = () => succeeded.every((ok) => ids.every((id) => ok.has(id)));
    while (!complete() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const finished = performance.timeOrigin + performance.now();

    // First-attempt latency: commit (the payload's timestamp, taken just before the commit) → first receipt.
    const latencies: number[] = [];
    let firstAttemptsDuringProduction = 0;
    for (const receiver of receivers) {
      const firstSeen = new Map<string, number>();
      for (const delivery of receiver.received) {
        const id = String(delivery.headers['webhook-id']);
        if (firstSeen.has(id)) continue;
        firstSeen.set(id, delivery.receivedAt);
        latencies.push(delivery.receivedAt - Date.parse(JSON.parse(delivery.body).timestamp));
        if (delivery.receivedAt <= produced) firstAttemptsDuringProduction++;
      }
    }
    latencies.sort((a, b) => a - b);
    const totalRequests = receivers.reduce((sum, receiver) => sum + receiver.received.length, 0);
    const retries = totalRequests - latencies.length;
    const missing = succeeded.map((ok) => ids.filter((id) => !ok.has(id)).length);
    const produceSeconds = (produced - started) / 1000;

    console.log(
      JSON.stringify(
        {
          events: ids.length,
          subscriptions: receivers.length,
          messages_expected_per_receiver: EVENTS,
          every_message_delivered_to_every_receiver: missing.every((n) => n === 0),
          missing_per_receiver: missing,
          requests_received: totalRequests,
          retries_after_failed_first_attempt: retries,
          first_attempt_latency_ms: { p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1)!) },
          production_seconds: round(produceSeconds),
          events_per_second: round(EVENTS / produceSeconds),
          first_attempt_deliveries_per_second_while_producing: round(firstAttemptsDuringProduction / produceSeconds),
          seconds_until_all_delivered: round((finished - started) / 1000),
        },
        null,
        2,
      ),
    );
    if (!complete() || ids.length !== EVENTS) process.exitCode = 1;
  } finally {
    for (const receiver of receivers) await receiver.close();
    await server.stop();
  }
}

const round = (value: number) => Math.round(value * 10) / 10;

await main();
