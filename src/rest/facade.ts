import { readdirSync, readFileSync } from 'node:fs';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { execute, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, OpenAPIValidator, type Context, type Document } from 'openapi-backend';
import { parse as parseYaml } from 'yaml';
import { consumeRateLimit, rateLimitFamilyOfPath } from '../graphql/guard.js';
import { compileOperation } from '../graphql/in-process-operation.js';
import type { OperationLimits } from '../graphql/operation-limits.js';
import { subscribeWhileCredentialsHold } from '../graphql/stream-credentials.js';
import { contextFor } from '../http/graphql-endpoints.js';
import { sendError, setRateLimitHeaders } from '../http/send-error.js';
import type { Logger } from '../platform/logger.js';
import type { Services } from '../services.js';
import { DomainError, NotFoundError, RateLimitedError, UnauthenticatedError, ValidationError, type ValidationIssue } from '../shared/errors.js';
import { unstorableTextIssues } from '../shared/well-formed-text.js';
import { collectionOperations } from './collections.operations.js';
import { connectionOperations } from './connections.operations.js';
import { searchOperations } from './search.operations.js';
import { sourceOperations } from './sources.operations.js';
import { webhookOperations } from './webhooks.operations.js';
import type { RestOperation } from './operation.js';
import { memoizeRouting } from './memoized-routing.js';
import { validationIssues } from './validation-issues.js';

/** Every REST operation by its operationId in openapi/openapi.yaml. */
const operations: Record<string, RestOperation> = { ...collectionOperations, ...sourceOperations, ...connectionOperations, ...searchOperations, ...webhookOperations };

const OPENAPI_DIR = new URL('../../openapi/', import.meta.url);

/**
 * The REST contract: `openapi/openapi.yaml` (info, shared components, the core paths) merged with
 * every other `openapi/*.yaml`, one per feature (e.g. `webhooks.yaml`), each holding `paths`, `tags`
 * and `components`. Features then own their part of the document; a name defined twice is an error.
 */
export function loadOpenApiDocument(dir = OPENAPI_DIR): Document {
  const read = (name: string) => parseYaml(readFileSync(new URL(name, dir), 'utf8')) as Record<string, any>;
  const document = read('openapi.yaml');
  const fragments = readdirSync(dir).filter((name) => name.endsWith('.yaml') && name !== 'openapi.yaml').sort();
  for (const name of fragments) {
    const fragment = read(name);
    document.tags = [...(document.tags ?? []), ...(fragment.tags ?? [])];
    mergeInto(document, 'paths', fragment.paths, name);
    for (const [section, entries] of Object.entries<Record<string, unknown>>(fragment.components ?? {})) {
      document.components[section] ??= {};
      mergeInto(document.components, section, entries, name);
    }
  }
  return document as Document;
}

function mergeInto(target: Record<string, any>, key: string, entries: Record<string, unknown> | undefined, file: string) {
  for (const [name, value] of Object.entries(entries ?? {})) {
    if (target[key][name] !== undefined) throw new Error(`openapi/${file} redefines ${key}.${name}`);
    target[key][name] = value;
  }
}

/**
 * The facade's validator: every operation's request validators compiled now (a schema Ajv rejects
 * fails the start, not a request), and no response validators. openapi-backend's init compiles those
 * too unless it compiles nothing ahead (its `quick` mode), and the facade never validates a response:
 * they were three quarters of its init (this host: 1.6–2.0 s against 0.44 s with request validators
 * alone), in every server's start.
 */
export function requestValidator(api: OpenAPIBackend): OpenAPIValidator {
  const validator = new OpenAPIValidator({ definition: api.definition, router: api.router, customizeAjv, coerceTypes: true, lazyCompileValidators: true });
  validator.preCompileRequestValidators();
  return validator;
}

/** The document is OpenAPI 3.1 (JSON Schema 2020-12); openapi-backend's own Ajv speaks draft-07. */
function customizeAjv(_ajv: unknown, options: object): never {
  const ajv = new Ajv2020({ ...options, strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv as never;
}

interface Compiled extends RestOperation {
  parsed: DocumentNode;
}

/**
 * The REST facade: openapi-backend routes and validates each request against the OpenAPI document,
 * then the operation runs as GraphQL in-process, with the same context a GraphQL request would get.
 */
export async function restFacade(document: Document, schema: GraphQLSchema, services: Services, logger: Logger, limits: OperationLimits) {
  const compiled = new Map<string, Compiled>(
    Object.entries(operations).map(([id, op]) => [id, { ...op, parsed: compileOperation(schema, `REST operation ${id}`, op.document, limits) }]),
  );

  // Validation is switched on after init, with request validators only (see requestValidator).
  const api = new OpenAPIBackend({ definition: document, strict: true, quick: false, validate: false, coerceTypes: true });
  // openapi-backend checks definitions against the OpenAPI 3.0 meta-schema, which rejects 3.1.
  api.validateDefinition = () => document;

  api.register({
    notFound: (_c, _req: ExpressRequest, res: ExpressResponse) => res.status(404).json({ detail: 'Not Found' }),
    methodNotAllowed: (c, _req: ExpressRequest, res: ExpressResponse) => {
      const allowed = api.router.getOperations().filter((op) => api.router.matchOperation({ ...c.request, method: op.method }, false)?.operationId === op.operationId);
      res.setHeader('Allow', allowed.map((op) => op.method.toUpperCase()).join(', '));
      res.status(405).json({ detail: 'Method Not Allowed' });
    },
    // Credentials were checked by the authenticate middleware; here only their presence matters.
    // openapi-backend runs security before validation, so anonymous callers learn nothing about inputs.
    unauthorizedHandler: (_c, _req: ExpressRequest, res: ExpressResponse) => {
      sendError(res, new UnauthenticatedError('Missing credentials: send an x-api-key header or an Authorization: Bearer token'));
    },
    validationFail: async (c, _req: ExpressRequest, res: ExpressResponse) => {
      const issues = validationIssues(c.validation.errors ?? []);
      const located = new Set(issues.map((issue) => JSON.stringify(issue.loc)));
      await refuseInput(c, res, [...issues, ...textIssues(c).filter((issue) => !located.has(JSON.stringify(issue.loc)))]);
    },
  });
  const authenticated = (_c: Context, _req: ExpressRequest, res: ExpressResponse) => res.locals.principal !== null;
  api.registerSecurityHandler('ApiKeyAuth', authenticated);
  api.registerSecurityHandler('BearerAuth', authenticated);
  for (const [operationId, operation] of compiled) {
    api.register(operationId, (c: Context, req: ExpressRequest, res: ExpressResponse) => run(c, req, res, operation));
  }
  await api.init();
  api.validator = requestValidator(api);
  api.validate = true;
  memoizeRouting(api.router);

  /** Bad input spends the budget too, as the GraphQL guards would have: refusals are not free probes. */
  async function refuseInput(c: Context, res: ExpressResponse, issues: ValidationIssue[]): Promise<void> {
    const context = contextFor(res, services);
    const family = rateLimitFamilyOfPath(c.operation.path);
    if (family && context.principal) {
      const limited = await consumeRateLimit(context, context.principal, family).then(
        () => null,
        (error: unknown) => (error instanceof RateLimitedError ? error : Promise.reject(error)),
      );
      setRateLimitHeaders(res, context.rateLimit);
      if (limited) return sendError(res, limited);
    }
    sendError(res, new ValidationError(issues));
  }

  async function run(c: Context, req: ExpressRequest, res: ExpressResponse, operation: Compiled): Promise<void> {
    const unstorable = textIssues(c);
    if (unstorable.length) return refuseInput(c, res, unstorable);
    const context = contextFor(res, services);
    const args = { schema, document: operation.parsed, variableValues: operation.variables(c.request), contextValue: context };
    const result = operation.stream ? await subscribeWhileCredentialsHold(args) : await execute(args);
    setRateLimitHeaders(res, context.rateLimit);
    for (const [name, value] of Object.entries(operation.headers?.(c.request) ?? {})) res.setHeader(name, value);
    if (Symbol.asyncIterator in result) return streamEvents(req, res, result, operation);
    const error = result.errors?.[0];
    if (error) {
      const original = error.originalError;
      if (original instanceof DomainError) return sendError(res, original, operation.inputLocation);
      // No path: the request itself was refused (variables GraphQL's types reject, such as an Int over
      // 32 bits), not a resolver that failed. The OpenAPI document let it through; it is still bad input.
      if (!error.path) return sendError(res, new ValidationError([{ loc: [operation.inputLocation], msg: error.message, type: 'value_error' }]));
      throw original ?? error;
    }
    const body = operation.respond(result.data as Record<string, unknown>);
    if (body === undefined) return sendError(res, new NotFoundError(operation.notFound?.(c.request) ?? 'Not Found'));
    sendJson(req, res, body);
  }

  /** Server-sent events, one per subscription result; the client leaving closes the subscription. */
  async function streamEvents(req: ExpressRequest, res: ExpressResponse, events: AsyncIterableIterator<ExecutionResult>, operation: Compiled): Promise<void> {
    res.status(200).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.flushHeaders();
    const close = () => void events.return?.(undefined);
    res.on('close', close);
    try {
      for await (const event of events) {
        if (res.destroyed) break;
        const message = event.errors?.length
          ? { type: 'error', message: event.errors[0]!.originalError instanceof DomainError ? event.errors[0]!.message : 'Internal error' }
          : operation.respond(event.data as Record<string, unknown>);
        res.write(`data: ${JSON.stringify(message)}\n\n`);
      }
    } catch (error) {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'event stream failed');
      if (!res.destroyed) res.write(`data: ${JSON.stringify({ type: 'error', message: 'Internal error' })}\n\n`);
    } finally {
      res.off('close', close);
      res.end();
    }
  }

  return async (req: ExpressRequest, res: ExpressResponse) => {
    try {
      decodeURIComponent(req.path);
    } catch {
      // A path that is not valid percent-encoding names no resource.
      return sendError(res, new NotFoundError('Not Found'));
    }
    await api.handleRequest(
      { method: req.method, path: req.path, query: req.query as Record<string, string | string[]>, headers: req.headers as Record<string, string | string[]>, body: req.body },
      req,
      res,
    );
  };
}

/**
 * A 200 with a JSON body. GET and HEAD answers go through express (its ETag, and a 304 for a
 * matching If-None-Match); other methods (every search is a POST) answer no conditional request, so
 * their body is written as it is, without express's ETag (a SHA-1 of the body) and the copy to a
 * Buffer it hashes: ~0.05 ms of main-thread CPU for a 10-result search (8.7 KB), hot.
 */
function sendJson(req: ExpressRequest, res: ExpressResponse, body: unknown): void {
  if (req.method === 'GET' || req.method === 'HEAD') {
    res.status(200).json(body);
    return;
  }
  const json = JSON.stringify(body);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}

/**
 * Strings of the request (path parameters, query, body: keys and values) that the service could
 * not store, in the contract's locations: one rule for every field, whatever the OpenAPI document says of it.
 */
function textIssues(c: Context): ValidationIssue[] {
  return [
    ...unstorableTextIssues(c.request.params ?? {}, ['path']),
    ...unstorableTextIssues(c.request.query ?? {}, ['query']),
    ...unstorableTextIssues(c.request.requestBody ?? {}, ['body']),
  ];
}
