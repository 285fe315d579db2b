import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { FakeGitLabOAuth } from './test-gitlab-oauth.js';
import { type FakeIssuable, type FakeNote, type FakeProject, type GitLabUser, issuableJson, noteJson, projectJson } from './test-gitlab-shapes.js';
import { closeLoopback, listenOnLoopback, recordedRequest, type RecordedRequest } from '../../platform/http/test-loopback-server.js';

export type { FakeIssuable, FakeNote, FakeProject, FakeWikiPage, GitLabUser } from './test-gitlab-shapes.js';

/**
 * Test helper: a local HTTP server speaking the part of GitLab's REST API v4 and OAuth 2 provider the
 * gitlab connector uses, as GitLab's documentation (gitlabhq/gitlabhq, doc/api/) defines them:
 *
 * - REST basics — doc/api/rest/_index.md: the API under `/api/v4`; projects addressed by id or by
 *   URL-encoded path (`group%2Fproject`); offset pagination (`page`, `per_page` default 20, max 100) with a
 *   `Link` header (rel prev/next/first/last) and `x-next-page`, `x-page`, `x-per-page`, `x-prev-page`,
 *   `x-total`, `x-total-pages`; keyset pagination (`pagination=keyset`) with only a `Link` rel="next"
 *   (projects: `order_by=id`, the next link adding `id_after`; the repository tree: an opaque `page_token`).
 * - Authentication — doc/api/rest/authentication.md: `Authorization: Bearer <token>` (OAuth tokens and
 *   personal/project/group access tokens) or `PRIVATE-TOKEN`; a missing or wrong token is a 401
 *   `{"message":"401 Unauthorized"}`; an expired OAuth token a 401 `{"error":"invalid_token",…}`.
 * - `GET /user` — doc/api/users.md; `GET /projects?membership=true`, `GET /projects/:id` — doc/api/projects.md
 *   (a project the token cannot see is `404 Project Not Found`).
 * - `GET /projects/:id/issues` and `/merge_requests` — doc/api/issues.md, merge_requests.md: `updated_after`
 *   (on or after), `order_by=updated_at`, `sort=asc`, every state by default; objects with `id`, `iid`,
 *   `title`, `description`, `state`, `labels`, `author`, `assignees`, `web_url`, `created_at`, `updated_at`…
 * - `GET /projects/:id/issues/:iid/notes`, `/merge_requests/:iid/notes` — doc/api/notes.md (`system` notes
 *   included); a new or edited note touches its issue's or merge request's `updated_at`, as GitLab does.
 * - `GET /projects/:id/wikis?with_content=1` — doc/api/wikis.md (every page at once: `slug`, `title`,
 *   `format`, `content`, `encoding`).
 * - `GET /projects/:id/repository/tree?recursive=true&pagination=keyset` and
 *   `GET /projects/:id/repository/blobs/:sha/raw` — doc/api/repositories.md (`id` is the blob SHA, `type`
 *   blob or tree, `mode`; an empty repository's tree is `404 Tree Not Found`).
 * - Rate limits — doc/security/rate_limits.md, doc/user/gitlab_com: `RateLimit-Limit`, `RateLimit-Observed`,
 *   `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-ResetTime` on answers; a 429 `Retry later` with
 *   `Retry-After` when throttled.
 * - OAuth — doc/api/oauth2.md: `POST /oauth/token`, answered by ./test-gitlab-oauth.ts. The objects' JSON is in
 *   ./test-gitlab-shapes.ts.
 */

export interface GitLabRequest extends RecordedRequest {
  status: number;
  privateToken: string | undefined;
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Answer => ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(value) });
const notFound = (what: string) => json(404, { message: `404 ${what} Not Found` });
const blobSha = (content: Buffer) => createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
const treeSha = (path: string) => createHash('sha1').update(`tree ${path}`).digest('hex');
const RATE_LIMIT = 2000;

export class TestGitLabServer {
  readonly user: GitLabUser = { id: 7, username: 'ada', name: 'Ada Lovelace' };
  readonly projects = new Map<number, FakeProject>();
  readonly requests: GitLabRequest[] = [];
  /** Access tokens accepted (personal access tokens and OAuth tokens), with their expiry when they have one. */
  readonly accessTokens = new Map<string, { expiresAt: number | null }>();
  /** The OAuth provider (applications, authorization codes, refresh tokens), issuing tokens into `accessTokens`. */
  readonly oauth = new FakeGitLabOAuth(this.accessTokens);
  /**
   * Answers given instead of the next requests whose path (as sent) matches, in order (a 429 with
   * Retry-After, a 500); `path` undefined matches any API request.
   */
  readonly interruptions: { path?: RegExp; status: number; retryAfter?: string; body?: string }[] = [];
  /** Most items a page holds, whatever `per_page` asks (so tests see several pages with few items). */
  maxPerPage = 100;
  /** Leaves out `x-total` / `x-total-pages` (GitLab.com does past 10,000 records). */
  omitTotals = false;
  /** Leaves the `Link` header out of offset pages, so clients page by `x-next-page` alone. */
  omitOffsetLinks = false;
  url = '';
  private server: Server | null = null;
  private nextId = 1000;
  /** The fake's clock: every change moves it on by a second, so `updated_at` values differ and order changes. */
  private clock = Date.parse('2025-03-01T09:00:00.000Z');

  now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  id(): number {
    return this.nextId++;
  }

  addProject(fields: { path: string; namespace?: string; name?: string; description?: string; visibility?: FakeProject['visibility']; member?: boolean; defaultBranch?: string | null; wikiEnabled?: boolean }): FakeProject {
    const namespacePath = fields.namespace ?? 'acme';
    const project: FakeProject = {
      id: this.id(),
      name: fields.name ?? fields.path,
      path: fields.path,
      namespace: { id: 900 + namespacePath.length, name: namespacePath.split('/').at(-1)!, path: namespacePath.split('/').at(-1)!, kind: 'group', full_path: namespacePath },
      description: fields.description ?? '',
      visibility: fields.visibility ?? 'private',
      default_branch: fields.defaultBranch === undefined ? 'main' : fields.defaultBranch,
      created_at: this.now(),
      member: fields.member ?? true,
      wiki_enabled: fields.wikiEnabled ?? true,
      issues: new Map(),
      mergeRequests: new Map(),
      wiki: new Map(),
      files: new Map(),
    };
    this.projects.set(project.id, project);
    return project;
  }

  addIssuable(project: FakeProject, kind: 'issues' | 'mergeRequests', fields: { title: string; description?: string; state?: string; labels?: string[]; confidential?: boolean }): FakeIssuable {
    const collection = kind === 'issues' ? project.issues : project.mergeRequests;
    const at = this.now();
    const issuable: FakeIssuable = {
      id: this.id(),
      iid: collection.size === 0 ? 1 : Math.max(...collection.keys()) + 1,
      title: fields.title,
      description: fields.description ?? '',
      state: fields.state ?? 'opened',
      labels: fields.labels ?? [],
      ...(fields.confidential ? { confidential: true } : {}),
      created_at: at,
      updated_at: at,
      notes: [],
    };
    collection.set(issuable.iid, issuable);
    return issuable;
  }

  /** Changes an issue or merge request (its `updated_at` moves on). */
  editIssuable(issuable: FakeIssuable, change: Partial<Pick<FakeIssuable, 'title' | 'description' | 'state' | 'labels'>>): void {
    Object.assign(issuable, change, { updated_at: this.now() });
  }

  addNote(issuable: FakeIssuable, body: string, system = false): FakeNote {
    const at = this.now();
    const note: FakeNote = { id: this.id(), body, system, author: this.user, created_at: at, updated_at: at };
    issuable.notes.push(note);
    issuable.updated_at = at; // GitLab touches the noteable
    return note;
  }

  editNote(issuable: FakeIssuable, note: FakeNote, body: string): void {
    note.body = body;
    note.updated_at = issuable.updated_at = this.now();
  }

  removeNote(issuable: FakeIssuable, note: FakeNote): void {
    issuable.notes = issuable.notes.filter((other) => other !== note);
    issuable.updated_at = this.now();
  }

  /** Expires an access token (as two hours passing would). */
  expire(accessToken: string): void {
    this.accessTokens.set(accessToken, { expiresAt: 0 });
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => void this.handle(request, response));
    this.url = await listenOnLoopback(this.server);
    return this;
  }

  async stop(): Promise<void> {
    await closeLoopback(this.server);
  }

  /** API requests whose path (as sent) matches. */
  requestsTo(path: RegExp): GitLabRequest[] {
    return this.requests.filter((request) => path.test(request.path));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const rawPath = (request.url ?? '/').split('?')[0]!;
    const url = new URL(request.url ?? '/', this.url);
    let answer: Answer;
    try {
      answer =
        rawPath === '/oauth/token' && request.method === 'POST'
          ? json(...this.oauth.token(request.headers['content-type'] ?? '', Buffer.concat(chunks).toString('utf8')))
          : this.api(request, rawPath, url);
    } catch (error) {
      answer = json(500, { message: `500 Internal Server Error: ${(error as Error).message}` });
    }
    this.requests.push({ ...recordedRequest(request), path: rawPath, status: answer.status, privateToken: request.headers['private-token'] as string | undefined });
    response.writeHead(answer.status, answer.headers ?? {}).end(answer.body);
  }

  private rateLimitHeaders(): Record<string, string> {
    const observed = this.requests.length + 1;
    const reset = Math.ceil(this.clock / 1000) + 60;
    return {
      'ratelimit-limit': String(RATE_LIMIT),
      'ratelimit-observed': String(observed),
      'ratelimit-remaining': String(Math.max(0, RATE_LIMIT - observed)),
      'ratelimit-reset': String(reset),
      'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
    };
  }

  private api(request: IncomingMessage, rawPath: string, url: URL): Answer {
    const interruption = this.interruptions.findIndex((candidate) => !candidate.path || candidate.path.test(rawPath));
    if (interruption >= 0) {
      const [given] = this.interruptions.splice(interruption, 1);
      return { status: given!.status, headers: { 'content-type': 'text/plain', ...this.rateLimitHeaders(), ...(given!.retryAfter ? { 'retry-after': given!.retryAfter } : {}) }, body: given!.body ?? (given!.status === 429 ? 'Retry later\n' : '') };
    }
    const refusal = this.authenticate(request);
    const answer = refusal ?? this.route(rawPath, url);
    return { ...answer, headers: { ...this.rateLimitHeaders(), ...answer.headers } };
  }

  private authenticate(request: IncomingMessage): Answer | null {
    const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const token = bearer ?? (request.headers['private-token'] as string | undefined);
    const known = token ? this.accessTokens.get(token) : undefined;
    if (!known) return json(401, { message: '401 Unauthorized' });
    if (known.expiresAt !== null && known.expiresAt <= Date.now()) {
      return json(401, { error: 'invalid_token', error_description: 'Token is expired. You can either do re-authorization or token refresh.' }, { 'www-authenticate': 'Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="Token is expired. You can either do re-authorization or token refresh."' });
    }
    return null;
  }

  private route(rawPath: string, url: URL): Answer {
    const parts = rawPath.replace(/^\/api\/v4\//, '').split('/');
    if (!rawPath.startsWith('/api/v4/')) return json(404, { error: '404 Not Found' });
    if (parts.length === 1 && parts[0] === 'user') return json(200, this.user);
    if (parts[0] !== 'projects') return json(404, { error: '404 Not Found' });
    if (parts.length === 1) return this.listProjects(url);
    const project = this.findProject(decodeURIComponent(parts[1]!));
    if (!project) return notFound('Project');
    const rest = parts.slice(2);
    if (rest.length === 0) return json(200, projectJson(this.url, project));
    if ((rest[0] === 'issues' || rest[0] === 'merge_requests') && rest.length === 1) return this.listIssuables(project, rest[0], url);
    if ((rest[0] === 'issues' || rest[0] === 'merge_requests') && rest.length === 3 && rest[2] === 'notes') {
      const issuable = (rest[0] === 'issues' ? project.issues : project.mergeRequests).get(Number(rest[1]));
      if (!issuable) return notFound(rest[0] === 'issues' ? 'Issue' : 'Merge Request');
      return this.page(url, [...issuable.notes].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id - b.id).map((note) => noteJson(project, issuable, rest[0] === 'issues' ? 'Issue' : 'MergeRequest', note)));
    }
    if (rest[0] === 'wikis' && rest.length === 1) {
      if (!project.wiki_enabled) return json(403, { message: '403 Forbidden' });
      const withContent = ['1', 'true'].includes(url.searchParams.get('with_content') ?? '');
      return json(200, [...project.wiki.values()].map((page) => ({ ...(withContent ? { content: page.content } : {}), format: page.format, slug: page.slug, title: page.title, encoding: 'UTF-8' })));
    }
    if (rest[0] === 'repository' && rest[1] === 'tree' && rest.length === 2) return this.tree(project, url);
    if (rest[0] === 'repository' && rest[1] === 'blobs' && rest[3] === 'raw' && rest.length === 4) {
      const content = [...project.files.values()].find((bytes) => blobSha(bytes) === rest[2]);
      if (!content) return notFound('Blob');
      return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: content };
    }
    return json(404, { error: '404 Not Found' });
  }

  private findProject(idOrPath: string): FakeProject | undefined {
    const project = /^\d+$/.test(idOrPath) ? this.projects.get(Number(idOrPath)) : [...this.projects.values()].find((candidate) => `${candidate.namespace.full_path}/${candidate.path}` === idOrPath);
    // A private project the user is no member of does not exist, as far as the API says.
    return project && (project.member || project.visibility !== 'private') ? project : undefined;
  }

  private listProjects(url: URL): Answer {
    const membership = ['true', '1'].includes(url.searchParams.get('membership') ?? '');
    const visible = [...this.projects.values()].filter((project) => (membership ? project.member : project.member || project.visibility !== 'private')).sort((a, b) => a.id - b.id);
    if (url.searchParams.get('pagination') !== 'keyset') return this.page(url, visible.map((project) => projectJson(this.url, project)));
    if (url.searchParams.get('order_by') !== 'id') return json(405, { error: 'Keyset pagination is not yet available for this type of request' });
    const after = Number(url.searchParams.get('id_after') ?? 0);
    const perPage = this.perPage(url);
    const rest = visible.filter((project) => project.id > after);
    const page = rest.slice(0, perPage);
    const headers: Record<string, string> = {};
    if (rest.length > perPage) {
      const next = new URL(url);
      next.searchParams.set('id_after', String(page.at(-1)!.id));
      headers.link = `<${this.url}${next.pathname}${next.search}>; rel="next"`;
    }
    return json(200, page.map((project) => projectJson(this.url, project)), headers);
  }

  private listIssuables(project: FakeProject, kind: 'issues' | 'merge_requests', url: URL): Answer {
    const updatedAfter = url.searchParams.get('updated_after');
    const state = url.searchParams.get('state') ?? 'all';
    const ascending = url.searchParams.get('sort') === 'asc';
    const byUpdate = url.searchParams.get('order_by') === 'updated_at';
    const items = [...(kind === 'issues' ? project.issues : project.mergeRequests).values()]
      .filter((issuable) => (updatedAfter ? Date.parse(issuable.updated_at) >= Date.parse(updatedAfter) : true) && (state === 'all' || issuable.state === state))
      .sort((a, b) => (byUpdate ? a.updated_at.localeCompare(b.updated_at) : a.created_at.localeCompare(b.created_at)) * (ascending ? 1 : -1) || (a.id - b.id) * (ascending ? 1 : -1));
    return this.page(url, items.map((issuable) => issuableJson(this.url, project, kind, issuable, this.user)));
  }

  private perPage(url: URL): number {
    const asked = Number(url.searchParams.get('per_page') ?? 20);
    return Math.min(Number.isInteger(asked) && asked > 0 ? asked : 20, 100, this.maxPerPage);
  }

  /** Offset pagination: the page asked for, with GitLab's Link and x-* headers. */
  private page(url: URL, all: unknown[]): Answer {
    const perPage = this.perPage(url);
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const totalPages = Math.max(1, Math.ceil(all.length / perPage));
    const link = (target: number, rel: string) => {
      const other = new URL(url);
      other.searchParams.set('page', String(target));
      other.searchParams.set('per_page', String(perPage));
      return `<${this.url}${other.pathname}${other.search}>; rel="${rel}"`;
    };
    const links = [...(page > 1 ? [link(page - 1, 'prev')] : []), ...(page < totalPages ? [link(page + 1, 'next')] : []), link(1, 'first'), ...(this.omitTotals ? [] : [link(totalPages, 'last')])];
    return json(200, all.slice((page - 1) * perPage, page * perPage), {
      ...(this.omitOffsetLinks ? {} : { link: links.join(', ') }),
      'x-page': String(page),
      'x-per-page': String(perPage),
      'x-next-page': page < totalPages ? String(page + 1) : '',
      'x-prev-page': page > 1 ? String(page - 1) : '',
      ...(this.omitTotals ? {} : { 'x-total': String(all.length), 'x-total-pages': String(totalPages) }),
    });
  }

  /** The recursive tree at the default branch: folders and blobs in path order, keyset-paged by an opaque token. */
  private tree(project: FakeProject, url: URL): Answer {
    const ref = url.searchParams.get('ref') ?? project.default_branch;
    if (project.files.size === 0 || ref !== project.default_branch) return notFound('Tree');
    const recursive = ['true', '1'].includes(url.searchParams.get('recursive') ?? '');
    const folders = new Set<string>();
    for (const path of project.files.keys()) {
      const parts = path.split('/');
      for (let depth = 1; depth < parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
    }
    const entries = [
      ...[...folders].map((path) => ({ id: treeSha(path), name: path.split('/').at(-1)!, type: 'tree', path, mode: '040000' })),
      ...[...project.files].map(([path, content]) => ({ id: blobSha(content), name: path.split('/').at(-1)!, type: 'blob', path, mode: '100644' })),
    ]
      .filter((entry) => recursive || !entry.path.includes('/'))
      .sort((a, b) => a.path.localeCompare(b.path));
    if (url.searchParams.get('pagination') !== 'keyset') return this.page(url, entries);
    const token = url.searchParams.get('page_token');
    const after = token ? (JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { file_path: string }).file_path : null;
    const rest = after === null ? entries : entries.filter((entry) => entry.path.localeCompare(after) > 0);
    const perPage = this.perPage(url);
    const page = rest.slice(0, perPage);
    const headers: Record<string, string> = {};
    if (rest.length > perPage) {
      const next = new URL(url);
      next.searchParams.set('page_token', Buffer.from(JSON.stringify({ file_path: page.at(-1)!.path })).toString('base64'));
      headers.link = `<${this.url}${next.pathname}${next.search}>; rel="next"`;
    }
    return json(200, page, headers);
  }
}
