import { createClient, type Client } from 'graphql-sse';
import type { TypedDocument } from './generated';

/** How the console proves who it is: an organization's API key, or a bearer token (admins change webhooks with one). */
export type Credentials = { kind: 'apiKey'; value: string } | { kind: 'bearer'; value: string };

/** One problem the service found with a field: where (`loc`, e.g. ["config", "path"]) and what. */
export interface FieldIssue {
  loc: (string | number)[];
  msg: string;
}

/** A GraphQL error as the console shows it: the message, its code, and per-field issues for BAD_USER_INPUT. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly issues: FieldIssue[] = [],
  ) {
    super(message);
  }
}

interface GraphQLError {
  message: string;
  extensions?: { code?: string; detail?: FieldIssue[] };
}

const GRAPHQL_PATH = '/graphql';
const STREAM_PATH = '/graphql/stream';
// The key lives for the browser tab only (sessionStorage), never in localStorage.
const STORAGE_KEY = 'catchment.credentials';

export function savedCredentials(): Credentials | null {
  const saved = sessionStorage.getItem(STORAGE_KEY);
  return saved ? (JSON.parse(saved) as Credentials) : null;
}

export function saveCredentials(credentials: Credentials | null): void {
  if (credentials) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credentials));
  else sessionStorage.removeItem(STORAGE_KEY);
}

function headersFor(credentials: Credentials): Record<string, string> {
  return credentials.kind === 'apiKey' ? { 'x-api-key': credentials.value } : { authorization: `Bearer ${credentials.value}` };
}

function toApiError(errors: GraphQLError[]): ApiError {
  const [first] = errors;
  return new ApiError(first?.message ?? 'Request failed', first?.extensions?.code ?? 'ERROR', first?.extensions?.detail ?? []);
}

/** The console's only way to the service: GraphQL over HTTP, and GraphQL over SSE for live views. */
export class Api {
  private readonly stream: Client;

  constructor(readonly credentials: Credentials) {
    this.stream = createClient({ url: STREAM_PATH, headers: () => headersFor(credentials), retryAttempts: 0 });
  }

  async request<R, V>(document: TypedDocument<R, V>, variables: V): Promise<R> {
    const response = await fetch(GRAPHQL_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headersFor(this.credentials) },
      body: JSON.stringify({ query: document, variables }),
    });
    const body = (await response.json().catch(() => ({}))) as { data?: R; errors?: GraphQLError[] };
    if (body.errors?.length) throw toApiError(body.errors);
    if (!response.ok || !body.data) throw new ApiError(`The service answered ${response.status}`, 'HTTP_ERROR');
    return body.data;
  }

  /** Follows a subscription: `next` for each result, `done` when the stream ends. Returns the function that stops it. */
  subscribe<R, V>(document: TypedDocument<R, V>, variables: V, handlers: { next(result: R): void; error(error: ApiError): void; done(): void }): () => void {
    return this.stream.subscribe<R>(
      { query: document, variables: variables as Record<string, unknown> },
      {
        next: (result) => {
          if (result.errors?.length) handlers.error(toApiError([...result.errors] as GraphQLError[]));
          else if (result.data) handlers.next(result.data);
        },
        error: (error) => handlers.error(Array.isArray(error) ? toApiError(error as GraphQLError[]) : new ApiError(String((error as Error)?.message ?? error), 'STREAM_ERROR')),
        complete: handlers.done,
      },
    );
  }

  dispose(): void {
    this.stream.dispose();
  }
}
