import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { buildSchema, type GraphQLSchema, getOperationAST, graphql, parse } from 'graphql';
import { type ConnectionArgs, dateHolds, relayConnection, UserInputError } from './test-linear-relay.js';
import { LINEAR_SCHEMA_SUBSET } from './test-linear-schema.js';
import { closeLoopback, listenOnLoopback, recordedRequest, type RecordedRequest } from '../../platform/http/test-loopback-server.js';

/**
 * Test helper: a local HTTP server speaking Linear's API as Linear documents it.
 *
 * - GraphQL at `POST /graphql` (linear.app/developers/graphql), validated and executed against the
 *   subset of the published schema in ./test-linear-schema.ts. Lists are Relay connections, paged,
 *   ordered and filtered as ./test-linear-relay.ts describes.
 * - Authentication (linear.app/developers/graphql#authentication, /oauth-2-0-authentication): a personal
 *   API key as `Authorization: <API_KEY>`, an OAuth access token as `Authorization: Bearer <ACCESS_TOKEN>`.
 *   Anything else is answered, as Linear answers errors, with HTTP 400 and a GraphQL error whose
 *   extensions carry `code: "AUTHENTICATION_ERROR"` and `type: "authentication error"` (the type strings
 *   of @linear/sdk's error.ts).
 * - Rate limits (linear.app/developers/rate-limiting): every answer carries X-RateLimit-Requests-Limit,
 *   -Remaining and -Reset (UTC epoch milliseconds) and X-Complexity; a limited request gets HTTP 400 with
 *   `extensions.code: "RATELIMITED"`.
 * - OAuth token endpoint `POST /oauth/token`, `application/x-www-form-urlencoded`, client id and secret in
 *   the body: `grant_type=authorization_code` (code, redirect_uri, PKCE code_verifier when the
 *   authorization had a challenge) and `grant_type=refresh_token`; answers `{ access_token, token_type:
 *   "Bearer", expires_in, scope, refresh_token }`, each refresh rotating the refresh token; refusals as
 *   RFC 6749 §5.2 (`invalid_grant` 400, `invalid_client` 401).
 */

export interface Stamped {
  id: string;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
  trashed?: boolean | null;
}
export interface TeamRecord extends Stamped {
  name: string;
  key: string;
  description: string | null;
}
export interface ProjectRecord extends Stamped {
  name: string;
  description: string;
  content: string | null;
  status: string;
  lead: string | null;
  teamIds: string[];
  startDate: string | null;
  targetDate: string | null;
}
export interface IssueRecord extends Stamped {
  teamId: string;
  projectId: string | null;
  number: number;
  title: string;
  description: string | null;
  state: { name: string; type: string };
  priority: number;
  assignee: string | null;
  creator: string | null;
  labels: string[];
  dueDate: string | null;
  estimate: number | null;
}
export interface CommentRecord extends Stamped {
  issueId: string;
  body: string;
  user: string | null;
}
export interface DocumentRecord extends Stamped {
  title: string;
  content: string | null;
  projectId: string | null;
  teamId: string | null;
  creator: string | null;
}

export interface LinearRequest extends RecordedRequest {
  /** The GraphQL operation's name (null for the token endpoint or a document that does not parse). */
  operation: string | null;
  variables: Record<string, unknown>;
  status: number;
  /** The GraphQL error code answered, if any (`RATELIMITED`, `AUTHENTICATION_ERROR`…). */
  errorCode: string | null;
}

/** An answer given instead of the next GraphQL request's (after authentication). */
export interface Interruption {
  code: string;
  type: string;
  message: string;
  /** Milliseconds from the answer to the X-RateLimit-Requests-Reset it announces. */
  resetInMs?: number;
  /** Which request it answers (default: the next one). */
  when?: (request: { operation: string | null; variables: Record<string, unknown> }) => boolean;
}

const PRIORITY_LABELS = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
export class TestLinearServer {
  readonly organization = { id: randomUUID(), name: 'Observatory', urlKey: 'observatory' };
  readonly teams = new Map<string, TeamRecord>();
  readonly projects = new Map<string, ProjectRecord>();
  readonly issues = new Map<string, IssueRecord>();
  readonly comments = new Map<string, CommentRecord>();
  readonly documents = new Map<string, DocumentRecord>();
  /** Personal API keys accepted. */
  readonly apiKeys = new Set<string>();
  /** OAuth access tokens accepted, with their expiry (epoch ms). */
  readonly accessTokens = new Map<string, number>();
  /** OAuth clients registered: client id → secret. */
  readonly clients = new Map<string, string>();
  readonly requests: LinearRequest[] = [];
  readonly interruptions: Interruption[] = [];
  url = '';
  private readonly refreshTokens = new Map<string, string>(); // refresh token → client id
  private readonly codes = new Map<string, { clientId: string; redirectUri: string; codeChallenge: string | null }>();
  private readonly schema: GraphQLSchema = buildSchema(LINEAR_SCHEMA_SUBSET);
  private server: Server | null = null;
  /** Linear's timestamps, one minute apart, so every change has its own `updatedAt`. */
  private clock = Date.parse('2025-03-01T09:00:00.000Z');

  tick(): string {
    this.clock += 60_000;
    return new Date(this.clock).toISOString();
  }

  private stamp(): Stamped {
    const now = this.tick();
    return { id: randomUUID(), createdAt: now, updatedAt: now, archivedAt: null };
  }

  addTeam(fields: Pick<TeamRecord, 'name' | 'key'> & Partial<TeamRecord>): TeamRecord {
    const team = { description: null, ...this.stamp(), ...fields };
    this.teams.set(team.id, team);
    return team;
  }

  addProject(fields: Pick<ProjectRecord, 'name' | 'teamIds'> & Partial<ProjectRecord>): ProjectRecord {
    const project: ProjectRecord = { description: '', content: null, status: 'Planned', lead: null, startDate: null, targetDate: null, trashed: null, ...this.stamp(), ...fields };
    this.projects.set(project.id, project);
    return project;
  }

  addIssue(fields: Pick<IssueRecord, 'teamId' | 'title'> & Partial<IssueRecord>): IssueRecord {
    const number = [...this.issues.values()].filter((issue) => issue.teamId === fields.teamId).length + 1;
    const issue: IssueRecord = {
      projectId: null,
      description: null,
      state: { name: 'Todo', type: 'unstarted' },
      priority: 0,
      assignee: null,
      creator: null,
      labels: [],
      dueDate: null,
      estimate: null,
      trashed: null,
      number,
      ...this.stamp(),
      ...fields,
    };
    this.issues.set(issue.id, issue);
    return issue;
  }

  addComment(fields: Pick<CommentRecord, 'issueId' | 'body'> & Partial<CommentRecord>): CommentRecord {
    const comment = { user: null, ...this.stamp(), ...fields };
    this.comments.set(comment.id, comment);
    return comment;
  }

  addDocument(fields: Pick<DocumentRecord, 'title'> & Partial<DocumentRecord>): DocumentRecord {
    const document: DocumentRecord = { content: null, projectId: null, teamId: null, creator: null, trashed: null, ...this.stamp(), ...fields };
    this.documents.set(document.id, document);
    return document;
  }

  /** Changes a node as the app would: its `updatedAt` moves on. */
  update<T extends Stamped>(record: T, changes: Partial<T>): void {
    Object.assign(record, changes, { updatedAt: this.tick() });
  }

  /** Archives a node (an issue closed long ago, a project archived): `archivedAt` set, `updatedAt` moves on. */
  archive(record: Stamped): void {
    const now = this.tick();
    Object.assign(record, { archivedAt: now, updatedAt: now });
  }

  /** Moves a node to the trash: archived and `trashed: true`. */
  trash(record: Stamped): void {
    this.archive(record);
    record.trashed = true;
  }

  /** The user approving an OAuth app at linear.app/oauth/authorize: the code the redirect would carry. */
  authorize(clientId: string, redirectUri: string, codeChallenge: string | null = null): string {
    const code = randomUUID().replace(/-/g, '');
    this.codes.set(code, { clientId, redirectUri, codeChallenge });
    return code;
  }

  /** Makes every access token issued so far expire (Linear's last 24 hours). */
  expireAccessTokens(): void {
    for (const token of this.accessTokens.keys()) this.accessTokens.set(token, 0);
  }

  rateLimitNext(resetInMs: number): void {
    this.interruptions.push({ code: 'RATELIMITED', type: 'ratelimited', message: 'Rate limit exceeded', resetInMs });
  }

  graphqlRequests(operation?: string): LinearRequest[] {
    return this.requests.filter((request) => request.path === '/graphql' && (operation === undefined || request.operation === operation));
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      void this.handle(request, response).catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ errors: [{ message: String(error), extensions: { code: 'INTERNAL_SERVER_ERROR', type: 'internal error' } }] }));
      });
    });
    this.url = await listenOnLoopback(this.server);
    return this;
  }

  async stop(): Promise<void> {
    await closeLoopback(this.server);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    if (request.method === 'POST' && path === '/graphql') return this.answerGraphql(request, body, response);
    if (request.method === 'POST' && path === '/oauth/token') return this.answerToken(request, body, response);
    this.requests.push({ ...recordedRequest(request), operation: null, variables: {}, status: 404, errorCode: null });
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('Not found');
  }

  private authenticated(authorization: string | undefined): boolean {
    if (!authorization) return false;
    const bearer = /^Bearer (.+)$/.exec(authorization);
    if (bearer) return (this.accessTokens.get(bearer[1]!) ?? 0) > Date.now();
    return this.apiKeys.has(authorization);
  }

  private async answerGraphql(request: IncomingMessage, body: string, response: ServerResponse): Promise<void> {
    let payload: { query?: string; variables?: Record<string, unknown> } = {};
    try {
      payload = JSON.parse(body) as typeof payload;
    } catch {
      // answered below as a document that does not parse
    }
    const source = payload.query ?? '';
    const variables = payload.variables ?? {};
    let operation: string | null = null;
    try {
      operation = getOperationAST(parse(source))?.name?.value ?? null;
    } catch {
      operation = null;
    }
    const record = (status: number, errorCode: string | null) =>
      this.requests.push({ ...recordedRequest(request), operation, variables, status, errorCode });
    const headers = (resetAt = Date.now() + 3_600_000, remaining = 4_999) => ({
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-requests-limit': '5000',
      'x-ratelimit-requests-remaining': String(remaining),
      'x-ratelimit-requests-reset': String(resetAt),
      'x-complexity': '100',
    });
    const fail = (code: string, type: string, message: string, resetAt?: number) => {
      record(400, code);
      response.writeHead(400, headers(resetAt, resetAt === undefined ? 4_999 : 0));
      response.end(JSON.stringify({ errors: [{ message, extensions: { code, type, userError: true, userPresentableMessage: message } }] }));
    };

    if (!this.authenticated(request.headers.authorization)) return fail('AUTHENTICATION_ERROR', 'authentication error', 'Authentication required, not authenticated');
    const index = this.interruptions.findIndex((candidate) => !candidate.when || candidate.when({ operation, variables }));
    const interruption = index < 0 ? undefined : this.interruptions.splice(index, 1)[0];
    if (interruption) return fail(interruption.code, interruption.type, interruption.message, interruption.resetInMs === undefined ? undefined : Date.now() + interruption.resetInMs);

    const result = await graphql({ schema: this.schema, source, variableValues: variables, rootValue: this.root() });
    if (result.errors?.length) {
      const invalidInput = result.errors.some((error) => error.originalError instanceof UserInputError);
      return fail(invalidInput ? 'INVALID_INPUT' : 'GRAPHQL_VALIDATION_FAILED', invalidInput ? 'invalid input' : 'graphql error', result.errors.map((error) => error.message).join('; '));
    }
    record(200, null);
    response.writeHead(200, headers());
    response.end(JSON.stringify({ data: result.data }));
  }

  private answerToken(request: IncomingMessage, body: string, response: ServerResponse): void {
    const form = new URLSearchParams(body);
    const refusal = this.grantRefusal(request, form);
    const answer = refusal ?? this.issueTokens(form.get('client_id')!);
    this.requests.push({ ...recordedRequest(request), operation: null, variables: {}, status: refusal?.status ?? 200, errorCode: refusal?.error ?? null });
    response.writeHead(refusal?.status ?? 200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(refusal ? { error: refusal.error, error_description: refusal.description } : answer));
  }

  /** Why the token request is refused (RFC 6749 §5.2), or null when it is granted (the code or refresh token is then used up). */
  private grantRefusal(request: IncomingMessage, form: URLSearchParams): { status: number; error: string; description: string } | null {
    if (!(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return { status: 400, error: 'invalid_request', description: 'Content-Type must be application/x-www-form-urlencoded' };
    const clientId = form.get('client_id') ?? '';
    if (!this.clients.has(clientId) || this.clients.get(clientId) !== form.get('client_secret')) return { status: 401, error: 'invalid_client', description: 'Client authentication failed' };
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      if (!code || code.clientId !== clientId || code.redirectUri !== form.get('redirect_uri')) return { status: 400, error: 'invalid_grant', description: 'Invalid authorization code' };
      const challenge = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
      if (code.codeChallenge !== null && challenge !== code.codeChallenge) return { status: 400, error: 'invalid_grant', description: 'Invalid code verifier' };
      return null;
    }
    if (grantType === 'refresh_token') {
      const refreshToken = form.get('refresh_token') ?? '';
      if (this.refreshTokens.get(refreshToken) !== clientId) return { status: 400, error: 'invalid_grant', description: 'Invalid refresh token' };
      this.refreshTokens.delete(refreshToken); // rotated: the new one replaces it
      return null;
    }
    return { status: 400, error: 'unsupported_grant_type', description: 'Unsupported grant type' };
  }

  private issueTokens(clientId: string) {
    const accessToken = `lin_oauth_${randomUUID().replace(/-/g, '')}`;
    const refreshToken = `lin_refresh_${randomUUID().replace(/-/g, '')}`;
    this.accessTokens.set(accessToken, Date.now() + 86_399_000);
    this.refreshTokens.set(refreshToken, clientId);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 86_399, scope: 'read', refresh_token: refreshToken };
  }

  // ---- GraphQL resolution: records as Linear's node types ----

  private user(name: string | null) {
    return name === null ? null : { id: `user-${slug(name)}`, name, displayName: slug(name) };
  }

  private teamView = (team: TeamRecord) => ({ ...team });

  private projectView = (project: ProjectRecord) => ({
    ...project,
    url: `https://linear.app/${this.organization.urlKey}/project/${slug(project.name)}-${project.id.slice(0, 12)}`,
    status: { id: `status-${slug(project.status)}`, name: project.status },
    lead: this.user(project.lead),
    teams: (args: ConnectionArgs) => relayConnection(project.teamIds.map((id) => this.teams.get(id)!), { ...args, orderBy: args.orderBy ?? 'createdAt' }, this.teamView),
  });

  private issueUrl(issue: IssueRecord): string {
    return `https://linear.app/${this.organization.urlKey}/issue/${this.identifier(issue)}/${slug(issue.title)}`;
  }

  private identifier(issue: IssueRecord): string {
    return `${this.teams.get(issue.teamId)!.key}-${issue.number}`;
  }

  private issueView = (issue: IssueRecord) => ({
    ...issue,
    identifier: this.identifier(issue),
    url: this.issueUrl(issue),
    priorityLabel: PRIORITY_LABELS[issue.priority] ?? 'No priority',
    state: { id: `state-${slug(issue.state.name)}`, ...issue.state },
    assignee: this.user(issue.assignee),
    creator: this.user(issue.creator),
    team: this.teamView(this.teams.get(issue.teamId)!),
    project: issue.projectId ? this.projectView(this.projects.get(issue.projectId)!) : null,
    labels: (args: ConnectionArgs) =>
      relayConnection(
        issue.labels.map((name) => ({ id: `label-${slug(name)}`, name, createdAt: issue.createdAt, updatedAt: issue.createdAt, archivedAt: null })),
        args,
        (label) => ({ id: label.id, name: label.name }),
      ),
    comments: (args: ConnectionArgs) => relayConnection(this.comments.values(), args, this.commentView, (comment) => comment.issueId === issue.id),
  });

  private commentView = (comment: CommentRecord) => {
    const issue = this.issues.get(comment.issueId)!;
    return { ...comment, url: `${this.issueUrl(issue)}#comment-${comment.id.slice(0, 8)}`, user: this.user(comment.user), issue: this.issueView(issue) };
  };

  private documentView = (document: DocumentRecord) => ({
    ...document,
    url: `https://linear.app/${this.organization.urlKey}/document/${slug(document.title)}-${document.id.slice(0, 12)}`,
    creator: this.user(document.creator),
    team: document.teamId ? this.teamView(this.teams.get(document.teamId)!) : null,
    project: document.projectId ? this.projectView(this.projects.get(document.projectId)!) : null,
  });

  private root() {
    return {
      organization: () => this.organization,
      issue: ({ id }: { id: string }) => {
        const issue = this.issues.get(id);
        if (!issue) throw new UserInputError('Entity not found: Issue');
        return this.issueView(issue);
      },
      teams: (args: ConnectionArgs) => relayConnection(this.teams.values(), args, this.teamView),
      projects: (args: ConnectionArgs) => relayConnection(this.projects.values(), args, this.projectView),
      documents: (args: ConnectionArgs) => relayConnection(this.documents.values(), args, this.documentView),
      issues: (args: ConnectionArgs) => relayConnection(this.issues.values(), args, this.issueView),
      comments: (args: ConnectionArgs) =>
        relayConnection(this.comments.values(), args, this.commentView, (comment) => {
          const issueFilter = args.filter?.issue;
          if (!issueFilter) return true;
          const issue = this.issues.get(comment.issueId) ?? null;
          if (issueFilter.null !== undefined && (issue === null) !== issueFilter.null) return false;
          return issue === null || dateHolds(issue.updatedAt, issueFilter.updatedAt);
        }),
    };
  }
}
