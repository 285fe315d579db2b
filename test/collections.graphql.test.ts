import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createClient, type Client } from 'graphql-sse';
import { graphql, startTestServer, type Deployment, type TestServer } from './support/harness.js';

const FIELDS = 'id name readableId status vectorSize embeddingModelName sourceConnectionSummaries { shortName name } syncConfig { behavior { skipGuardrails skipHashComparison replayFromArf } cursor { skipLoad } }';

/** Collects the next `count` events of a subscription made with the real graphql-sse client. */
function subscribe(client: Client, query: string, count: number): { events: Promise<any[]>; ready: Promise<void>; dispose(): void } {
  const received: any[] = [];
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  let dispose = () => {};
  const events = new Promise<any[]>((resolve, reject) => {
    dispose = client.subscribe(
      { query },
      {
        next: (value) => {
          received.push(value);
          if (received.length === count) resolve(received);
        },
        error: reject,
        complete: () => resolve(received),
      },
    );
  });
  // The stream is live once the server accepted it; a short pause covers the Redis SUBSCRIBE round trip.
  setTimeout(markReady, 400);
  return { events, ready, dispose };
}

describe.each<Deployment>(['embedded', 'servers'])('collections over GraphQL (%s deployment)', (deployment) => {
  let server: TestServer;
  const auth = () => ({ apiKey: server.apiKey });

  beforeAll(async () => {
    server = await startTestServer({ deployment });
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('create, read, list, rename and delete', async () => {
    const created = await graphql(
      server.url,
      `mutation ($input: CollectionCreateInput!) { createCollection(input: $input) { ${FIELDS} } }`,
      { input: { name: 'GraphQL Made', syncConfig: { behavior: { skipGuardrails: true } } } },
      auth(),
    );
    expect(created.status).toBe(200);
    const collection = created.body.data!.createCollection;
    expect(collection).toMatchObject({
      name: 'GraphQL Made',
      readableId: expect.stringMatching(/^graphql-made-[a-z0-9]{6}$/),
      status: 'NEEDS_SOURCE',
      vectorSize: 100,
      sourceConnectionSummaries: [],
      syncConfig: { behavior: { skipGuardrails: true, skipHashComparison: false, replayFromArf: false }, cursor: null },
    });
    const read = await graphql(server.url, `{ collection(readableId: "${collection.readableId}") { ${FIELDS} } }`, {}, auth());
    expect(read.body.data!.collection).toEqual(collection);
    const missing = await graphql(server.url, '{ collection(readableId: "nope-nope") { id } }', {}, auth());
    expect(missing.body).toEqual({ data: { collection: null } });

    const renamed = await graphql(server.url, `mutation { updateCollection(readableId: "${collection.readableId}", input: { name: "Renamed!" }) { name readableId syncConfig { behavior { skipGuardrails } } } }`, {}, auth());
    expect(renamed.body.data!.updateCollection).toEqual({ name: 'Renamed!', readableId: collection.readableId, syncConfig: { behavior: { skipGuardrails: true } } });

    const listed = await graphql(server.url, '{ collections(search: "renamed", limit: 5) { readableId } }', {}, auth());
    expect(listed.body.data!.collections).toEqual([{ readableId: collection.readableId }]);

    const deleted = await graphql(server.url, `mutation { deleteCollection(readableId: "${collection.readableId}") { id } }`, {}, auth());
    expect(deleted.body.data!.deleteCollection.id).toBe(collection.id);
    const again = await graphql(server.url, `mutation { deleteCollection(readableId: "${collection.readableId}") { id } }`, {}, auth());
    expect(again.body.errors![0]!.extensions!.code).toBe('NOT_FOUND');
  });

  test('business-rule failures come back as BAD_USER_INPUT with the same detail items as REST', async () => {
    const response = await graphql(server.url, 'mutation { createCollection(input: { name: "abc", readableId: "Bad Id" }) { id } }', {}, auth());
    expect(response.body.errors![0]!.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      detail: [
        { loc: ['name'], msg: expect.any(String), type: 'string_length' },
        { loc: ['readable_id'], msg: expect.any(String), type: 'string_pattern_mismatch' },
      ],
    });
    const limits = await graphql(server.url, '{ collections(limit: 5000) { id } }', {}, auth());
    expect(limits.body.errors![0]!.extensions!.detail).toEqual([expect.objectContaining({ loc: ['limit'] })]);
  });

  test('the collectionEvents subscription streams created, updated and deleted events over graphql-sse', async () => {
    const client = createClient({ url: `${server.url}/graphql/stream`, headers: { 'x-api-key': server.apiKey }, retryAttempts: 0 });
    const stream = subscribe(client, 'subscription { collectionEvents { type collection { readableId name } } }', 3);
    await stream.ready;
    const created = await graphql(server.url, 'mutation { createCollection(input: { name: "Watched one", readableId: "watched-one" }) { id } }', {}, auth());
    expect(created.body.errors).toBeUndefined();
    await graphql(server.url, 'mutation { updateCollection(readableId: "watched-one", input: { name: "Watched two" }) { id } }', {}, auth());
    await graphql(server.url, 'mutation { deleteCollection(readableId: "watched-one") { id } }', {}, auth());
    const events = await stream.events;
    stream.dispose();
    client.dispose();
    expect(events.map((event) => event.errors)).toEqual([undefined, undefined, undefined]);
    expect(events.map((event) => event.data.collectionEvents)).toEqual([
      { type: 'CREATED', collection: { readableId: 'watched-one', name: 'Watched one' } },
      { type: 'UPDATED', collection: { readableId: 'watched-one', name: 'Watched two' } },
      { type: 'DELETED', collection: { readableId: 'watched-one', name: 'Watched two' } },
    ]);
  });

  test('a subscription without credentials is refused', async () => {
    const client = createClient({ url: `${server.url}/graphql/stream`, retryAttempts: 0 });
    const result = await new Promise<any>((resolve) => {
      client.subscribe({ query: 'subscription { collectionEvents { type } } ' }, { next: resolve, error: resolve, complete: () => resolve('complete') });
    });
    client.dispose();
    expect(result.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/Missing credentials/), extensions: { code: 'UNAUTHENTICATED' } })]);
  });
});
