import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import type { NextFunction, Request, Response, Router } from 'express';
import express from 'express';
import { GraphQLError, parse, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/express';
import type { GraphQLContext } from '../graphql/context.js';
import { formatError, STATUS_BY_CODE } from '../graphql/errors.js';
import { documentNestingRefusal } from '../graphql/document-nesting.js';
import { operationRefusal, type OperationLimits } from '../graphql/operation-limits.js';
import { subscribeWhileCredentialsHold } from '../graphql/stream-credentials.js';
import type { Logger } from '../platform/logger.js';
import type { Services } from '../services.js';

/** Statuses a whole GraphQL response takes when every error is of one of these kinds. */
const TRANSPORT_CODES = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED']);

export function contextFor(res: Response, services: Services): GraphQLContext {
  return { requestId: res.locals.requestId, principal: res.locals.principal, services, rateLimit: null };
}

/**
 * Maps auth and rate-limit failures to HTTP statuses (401/403/429 with Retry-After) so HTTP clients
 * and proxies see them, and reports rate-limit headers on every response.
 */
function httpStatusPlugin(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          const rateLimit = contextValue.rateLimit;
          if (rateLimit) {
            response.http.headers.set('ratelimit-limit', String(rateLimit.limit));
            response.http.headers.set('ratelimit-remaining', String(rateLimit.remaining));
            response.http.headers.set('ratelimit-reset', String(rateLimit.resetSeconds));
          }
          if (response.body.kind !== 'single') return;
          const codes = new Set((response.body.singleResult.errors ?? []).map((error) => String(error.extensions?.code)));
          if (codes.size !== 1) return;
          const [code] = codes as unknown as [string];
          if (!TRANSPORT_CODES.has(code)) return;
          response.http.status = STATUS_BY_CODE[code];
          if (code === 'RATE_LIMITED' && rateLimit) response.http.headers.set('retry-after', String(rateLimit.resetSeconds));
        },
      };
    },
  };
}

/**
 * What Apollo must not run, refused once the operation is known and before it executes, with a
 * 400: a subscription (it needs a stream: /graphql/stream), unstorable text, too deep or costly.
 */
function admissionPlugin(schema: GraphQLSchema, limits: OperationLimits, streamPath: string): ApolloServerPlugin<GraphQLContext> {
  const refuse = (error: GraphQLError) => new GraphQLError(error.message, { extensions: { ...error.extensions, http: { status: STATUS_BY_CODE.BAD_REQUEST } } });
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, request }) {
          if (operation?.operation === 'subscription') {
            throw refuse(new GraphQLError(`Subscriptions are served over GraphQL over SSE at ${streamPath} (graphql-sse, distinct connections mode), not on this endpoint`, { extensions: { code: 'BAD_REQUEST' } }));
          }
          const refusal = operationRefusal(schema, document, request.operationName, request.variables, limits);
          if (refusal) throw refuse(refusal);
        },
      };
    },
  };
}

function errorLoggingPlugin(logger: Logger): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart({ contextValue }) {
      return {
        async didEncounterErrors({ errors }) {
          for (const error of errors) {
            const original = error.originalError;
            if (original && !('code' in original) && !error.extensions?.code) {
              logger.error({ err: original, requestId: contextValue.requestId }, 'unexpected error in a GraphQL operation');
            }
          }
        },
      };
    },
  };
}

/**
 * A document nesting too deep for graphql-js to parse is refused before Apollo parses it, as Apollo
 * answers a parse failure (400, GRAPHQL_PARSE_FAILED): none of Apollo's plugin hooks runs before its
 * parse and may answer other than 500. A GET's documents are read from the URL as Apollo reads them
 * (URLSearchParams), not from Express's `req.query`, whose parser differs from it (a malformed escape,
 * past 1,000 parameters, `]=` in a value) and would let a document past this check that Apollo parses.
 */
function refuseUnparsableNesting(req: Request, res: Response, next: NextFunction): void {
  const documents: unknown[] =
    req.method === 'GET' ? new URLSearchParams(queryStringOf(req.originalUrl)).getAll('query') : [(req.body as { query?: unknown } | undefined)?.query];
  for (const document of documents) {
    const refusal = typeof document === 'string' ? documentNestingRefusal(document) : null;
    if (refusal) return void res.status(400).json(parseFailure(refusal));
  }
  next();
}

/** What follows the first `?` of a request's URL (empty without one): the part URLSearchParams reads. */
function queryStringOf(url: string): string {
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start + 1);
}

/** A response body of one parse failure, as Apollo formats its own. */
function parseFailure(error: GraphQLError): { errors: GraphQLFormattedError[] } {
  return { errors: [formatError(error.toJSON(), error)] };
}

export interface GraphqlEndpoints {
  /** graphql-sse subscriptions; mount before `router` (GraphQL over SSE, distinct connections). */
  streamHandler: (req: Request, res: Response) => Promise<void>;
  router: Router;
  stop(): Promise<void>;
}

export async function graphqlEndpoints(schema: GraphQLSchema, services: Services, logger: Logger, limits: OperationLimits, streamPath: string): Promise<GraphqlEndpoints> {
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // The process owns its signals (src/main.ts drains HTTP, then the worker, then connections).
    stopOnTerminationSignals: false,
    formatError,
    plugins: [ApolloServerPluginLandingPageDisabled(), admissionPlugin(schema, limits, streamPath), httpStatusPlugin(), errorLoggingPlugin(logger)],
  });
  await apollo.start();

  // Subscriptions report errors with the same codes and masking as Apollo does for the rest
  // (onNext sees single results too, such as a subscribe() that refused the caller).
  const formatResult = <R extends { errors?: readonly GraphQLError[] }>(result: R): R =>
    result.errors ? ({ ...result, errors: result.errors.map((error) => formatError(error.toJSON(), error)) } as R) : result;
  const sse = createHandler<GraphQLContext>({
    schema,
    context: (req) => contextFor(req.context.res, services),
    // The same admission as Apollo's, with the variables at hand: refusals are sent as the stream's
    // one result, as graphql-sse sends validation errors. Unparsable queries are left to it.
    onSubscribe: (req, params) => {
      const nesting = documentNestingRefusal(params.query);
      if (nesting) return [JSON.stringify(parseFailure(nesting)), { status: 400, statusText: 'Bad Request', headers: { 'content-type': 'application/json; charset=utf-8' } }];
      let document: DocumentNode;
      try {
        document = parse(params.query);
      } catch {
        return;
      }
      const refusal = operationRefusal(schema, document, params.operationName, params.variables, limits);
      if (refusal) return { data: null, errors: [refusal] };
      return { schema, document, operationName: params.operationName, variableValues: params.variables, contextValue: contextFor(req.context.res, services) };
    },
    subscribe: (args) => subscribeWhileCredentialsHold(args),
    onNext: (_ctx, _req, result) => formatResult(result),
  });

  const router = express.Router();
  router.use(refuseUnparsableNesting);
  router.use(expressMiddleware(apollo, { context: async ({ res }) => contextFor(res, services) }));
  return {
    streamHandler: sse,
    router,
    stop: () => apollo.stop(),
  };
}
