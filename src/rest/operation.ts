import type { ParsedRequest as Request } from 'openapi-backend';

/**
 * One REST operation of the facade: the GraphQL operation it runs, how the HTTP request becomes its
 * variables, and how its data becomes the spec's JSON. Statuses come from the GraphQL errors.
 */
export interface RestOperation {
  /** A GraphQL document with exactly one operation. */
  document: string;
  variables(request: Request): Record<string, unknown>;
  /** Where the operation's input came from, prefixed to the `loc` of service validation errors. */
  inputLocation: 'body' | 'query' | 'path';
  /** Maps the GraphQL `data` to the response body. Returning undefined means 404. */
  respond(data: Record<string, unknown>): unknown;
  /** The 404 message when `respond` returns undefined. */
  notFound?: (request: Request) => string;
  /** Extra response headers (e.g. `Deprecation` on deprecated operations). */
  headers?: (request: Request) => Record<string, string>;
  /**
   * A subscription answered as `text/event-stream`: each event `respond` maps is one SSE message
   * (`data: <json>`); the response ends with the subscription, and a client that disconnects ends it.
   */
  stream?: boolean;
}
