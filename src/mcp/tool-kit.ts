import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { ErrorCode, McpError, type CallToolResult, type ServerNotification, type ServerRequest, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { ZodRawShape } from 'zod';
import type { GraphQLContext } from '../graphql/context.js';
import { compileOperation, runOperation } from '../graphql/in-process-operation.js';
import type { OperationLimits } from '../graphql/operation-limits.js';
import type { Principal } from '../modules/organizations/principal.js';
import type { Logger } from '../platform/logger.js';
import type { Services } from '../services.js';
import { ConflictError, DomainError, ForbiddenError, NotFoundError, RateLimitedError, UnauthenticatedError, ValidationError } from '../shared/errors.js';
import { unstorableTextIssues } from '../shared/well-formed-text.js';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * What the HTTP endpoint attaches to each request: the caller its credentials named. The credential
 * itself stays out of it (tools never need it).
 */
export function authInfoOf(principal: Principal, requestId: string): AuthInfo {
  return { token: '', clientId: principal.kind === 'api_key' ? principal.apiKeyId : principal.userId, scopes: [principal.role], extra: { principal, requestId } };
}

/** What every tool group is built with. */
export interface ToolDependencies {
  schema: GraphQLSchema;
  services: Services;
  limits: OperationLimits;
  logger: Logger;
  /** Compiled documents by their text: each MCP session builds its tools, the documents are compiled once. */
  compiled: Map<string, DocumentNode>;
}

/**
 * The tools of one group run GraphQL documents in-process, as the REST facade does, so every guard
 * applies as on the other transports: authentication, the organization's scope, roles, rate-limit
 * families and operation limits. Groups are built per session; their documents are compiled once, in
 * the shared `compiled` cache.
 */
export class ToolGroup {
  constructor(
    protected readonly deps: ToolDependencies,
    protected readonly server: McpServer,
  ) {}

  protected compile(name: string, document: string): DocumentNode {
    let compiled = this.deps.compiled.get(document);
    if (!compiled) {
      compiled = compileOperation(this.deps.schema, `MCP tool ${name}`, document, this.deps.limits);
      this.deps.compiled.set(document, compiled);
    }
    return compiled;
  }

  protected run<T>(document: DocumentNode, variables: Record<string, unknown>, context: GraphQLContext): Promise<T> {
    return runOperation<T>(this.deps.schema, document, variables, context);
  }

  /**
   * Registers a tool whose failures are tool results an agent can act on (isError, with what to do
   * next), never protocol errors; unexpected failures are logged and reported without details.
   */
  protected tool<Shape extends ZodRawShape>(
    name: string,
    config: { title: string; description: string; inputSchema: Shape; annotations: ToolAnnotations },
    handler: (args: Parameters<ToolCallback<Shape>>[0], context: GraphQLContext, extra: ToolExtra) => Promise<CallToolResult>,
  ): void {
    const callback = (async (args: Parameters<ToolCallback<Shape>>[0], extra: ToolExtra) => {
      try {
        // The REST and GraphQL doors refuse text PostgreSQL cannot hold (NUL, lone surrogates); so does this one,
        // instead of the database failing on it as an internal error.
        const unstorable = unstorableTextIssues(args, []);
        if (unstorable.length) throw new ValidationError(unstorable);
        return await handler(args, this.contextOf(extra), extra);
      } catch (error) {
        if (error instanceof DomainError) return toolError(describe(error));
        this.deps.logger.error({ err: error instanceof Error ? error.message : String(error), tool: name }, 'MCP tool failed');
        return toolError('Internal error while running the tool; try again later.');
      }
    }) as ToolCallback<Shape>;
    this.server.registerTool(name, { ...config, annotations: { ...config.annotations, title: config.title, openWorldHint: false } }, callback);
  }

  /** Runs a resource callback with the caller's context; failures become protocol errors worded as for tools. */
  protected async resource<T>(extra: ToolExtra, read: (context: GraphQLContext) => Promise<T>): Promise<T> {
    try {
      return await read(this.contextOf(extra));
    } catch (error) {
      if (error instanceof DomainError) throw new McpError(error instanceof NotFoundError ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest, describe(error));
      this.deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'MCP resource failed');
      throw new McpError(ErrorCode.InternalError, 'Internal error while reading the resource; try again later.');
    }
  }

  private contextOf(extra: ToolExtra): GraphQLContext {
    const caller = extra.authInfo?.extra as { principal: Principal; requestId: string } | undefined;
    if (!caller) throw new UnauthenticatedError('Missing credentials: send an x-api-key header or an Authorization: Bearer token');
    return { requestId: caller.requestId, principal: caller.principal, services: this.deps.services, rateLimit: null };
  }
}

/** A tool's answer: the object for clients that read structured content, and the same as JSON text. */
export function toolResult(structured: Record<string, unknown>, summary?: string): CallToolResult {
  const json = JSON.stringify(structured, null, 2);
  return { content: [{ type: 'text', text: summary ? `${summary}\n\n${json}` : json }], structuredContent: structured };
}

export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** Domain errors worded for an agent: what went wrong and what to do about it. */
function describe(error: DomainError): string {
  if (error instanceof RateLimitedError) return `Rate limited: this organization's budget for this kind of request is spent. Wait ${error.retryAfterSeconds} seconds before calling again.`;
  if (error instanceof ForbiddenError) return `Forbidden (403): ${error.message}. The credentials this client uses do not allow it; ask an administrator.`;
  if (error instanceof UnauthenticatedError) return `Unauthenticated (401): ${error.message}`;
  if (error instanceof NotFoundError) {
    const hint = /^Collection /.test(error.message)
      ? ' Call list_collections to see the readable ids of the collections you can use.'
      : /^Source connection /.test(error.message)
        ? ' Call list_source_connections to see the connections and their ids.'
        : ' Use ids from search results or browse.';
    return `Not found: ${error.message}.${hint}`;
  }
  if (error instanceof ValidationError) return `Invalid input: ${error.issues.map((issue) => `${issue.loc.length ? issue.loc.join('.') + ': ' : ''}${issue.msg}`).join('; ')}`;
  if (error instanceof ConflictError) return `Conflict: ${error.message}`;
  return error.message;
}
