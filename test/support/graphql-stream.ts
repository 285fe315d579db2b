import { createClient } from 'graphql-sse';

/**
 * The first result of an operation sent to `/graphql/stream` with the real graphql-sse client: the
 * operation's one result, a subscription's first event, or the error result the stream answers with.
 */
export async function firstStreamResult(url: string, apiKey: string, query: string, variables?: Record<string, unknown>): Promise<any> {
  const client = createClient({ url: `${url}/graphql/stream`, headers: { 'x-api-key': apiKey }, retryAttempts: 0 });
  try {
    return await new Promise((resolve, reject) => client.subscribe({ query, variables }, { next: resolve, error: reject, complete: () => {} }));
  } finally {
    client.dispose();
  }
}
