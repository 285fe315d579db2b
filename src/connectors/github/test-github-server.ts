import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { discussionsAnswer, type FakeComment, type FakeDiscussion, type FakeIssue, type FakeRelease, type FakeRepository, type FakeReview, type FakeReviewComment, gitBlobSha, repositoryJson, treeJson } from './test-github-data.js';
import { TestGitHubOAuth } from './test-github-oauth.js';
import { closeLoopback, listenOnLoopback, recordedRequest, type RecordedRequest } from '../../platform/http/test-loopback-server.js';

/**
 * Test helper: a local HTTP server speaking GitHub's APIs in the layout of GitHub Enterprise Server
 * (REST under /api/v3, GraphQL at /api/graphql, OAuth at /login/oauth), with the shapes GitHub
 * publishes (github/rest-api-description, descriptions/api.github.com, and docs.github.com):
 * - GET /user (users/get-authenticated), GET /user/repos (repos/list-for-authenticated-user) and
 *   GET /repos/{owner}/{repo} (repos/get): `full-repository` fields (owner, private, visibility,
 *   html_url, default_branch, has_discussions…);
 * - GET /repos/{owner}/{repo}/issues (issues/list-for-repo: state open|closed|all, default open;
 *   sort created|updated; direction; since = updated at or after; pull requests listed among issues
 *   with a `pull_request` object) and /issues/{number} (issues/get);
 * - GET /repos/{owner}/{repo}/issues/comments (issues/list-comments-for-repo) and /pulls/comments
 *   (pulls/list-review-comments-for-repo): sort, direction, since;
 * - GET /repos/{owner}/{repo}/pulls/{number}/reviews (pulls/list-reviews), /releases
 *   (repos/list-releases, newest first), /git/trees/{sha or ref}?recursive=1 (git/get-tree; 409
 *   "Git Repository is empty."), /git/blobs/{sha} (git/get-blob: base64 JSON, or the raw bytes for
 *   Accept: application/vnd.github.raw+json); blob shas are git's (sha1 of "blob <size>\0<bytes>");
 * - paging by `page`/`per_page` (at most 100) with a `Link` header (rel next/prev/first/last)
 *   (docs.github.com/rest/using-the-rest-api/using-pagination-in-the-rest-api);
 * - `Authorization: Bearer <token>` or `token <token>`; otherwise 401 {"message":"Bad credentials",
 *   "documentation_url", "status"} (docs.github.com/rest/authentication/authenticating-to-the-rest-api);
 * - x-ratelimit-limit/-remaining/-used/-reset/-resource on every answer, and on demand the primary
 *   limit's 403 (x-ratelimit-remaining: 0) or a secondary limit's 403/429 with Retry-After
 *   (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api);
 * - POST /api/graphql: the `repository.discussions` connection (first/after, orderBy UPDATED_AT
 *   DESC, pageInfo) of docs.github.com/graphql/guides/using-the-graphql-api-for-discussions, with a
 *   NOT_FOUND error for an unknown repository; it reads the operation's variables, not its text;
 * - POST /login/oauth/access_token: the OAuth token endpoint of TestGitHubOAuth (test-github-oauth.ts).
 * The data and the JSON shapes it answers with are in test-github-data.ts.
 */

export interface GitHubRequest extends RecordedRequest {
  /** Path without the /api/v3 prefix (REST), or /api/graphql, /login/oauth/access_token. */
  path: string;
  status: number;
  accept: string | undefined;
  apiVersion: string | undefined;
  /** GraphQL variables, for POST /api/graphql. */
  variables?: Record<string, unknown>;
}

/** An answer given instead of the next matching request: a rate limit (primary or secondary) or a server error. */
export interface Interruption {
  status: 403 | 429 | 500 | 502;
  retryAfter?: string;
  /** Primary rate limit: x-ratelimit-remaining 0 and a reset time. */
  exhausted?: boolean;
  /** Only requests whose path matches; every request when absent. */
  path?: RegExp;
  /** How many requests it answers (default 1). */
  times?: number;
  /** How many matching requests it lets through first (default 0). */
  pass?: number;
}

const MAX_PER_PAGE = 100;
const REST = '/api/v3';

export class TestGitHubServer {
  readonly repositories = new Map<string, FakeRepository>();
  /** Access tokens the API accepts (personal access tokens and those the token endpoint issued). */
  readonly tokens = new Set<string>();
  readonly oauth = new TestGitHubOAuth();
  readonly requests: GitHubRequest[] = [];
  readonly interruptions: Interruption[] = [];
  /** Most items a page holds, whatever per_page asks (GitHub's cap is 100; tests lower it to page small lists). */
  maxPerPage = MAX_PER_PAGE;
  private clock = Date.UTC(2025, 0, 1, 12, 0, 0);
  private nextId = 1000;
  private server: Server | null = null;
  url = '';

  /** The next second of the fake's clock, as GitHub writes times (to the second, UTC). */
  tick(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  id(): number {
    return this.nextId++;
  }

  get apiUrl(): string {
    return `${this.url}${REST}`;
  }

  addRepository(fullName: string, options: Partial<Pick<FakeRepository, 'private' | 'description' | 'has_discussions' | 'default_branch'>> = {}): FakeRepository {
    const [owner, name] = fullName.split('/') as [string, string];
    const repository: FakeRepository = {
      id: this.id(),
      owner,
      name,
      private: options.private ?? false,
      description: options.description ?? `The ${name} repository`,
      default_branch: options.default_branch ?? 'main',
      has_discussions: options.has_discussions ?? true,
      created_at: this.tick(),
      issues: [],
      comments: [],
      reviewComments: [],
      reviews: new Map(),
      releases: [],
      files: new Map(),
      discussions: [],
    };
    this.repositories.set(fullName, repository);
    return repository;
  }

  addIssue(repository: FakeRepository, fields: Partial<FakeIssue> & { title: string }): FakeIssue {
    const at = this.tick();
    const issue: FakeIssue = { id: this.id(), number: repository.issues.length + 1, body: '', user: 'octocat', state: 'open', labels: [], pull: false, created_at: at, updated_at: at, ...fields };
    repository.issues.push(issue);
    return issue;
  }

  /** A comment on an issue or pull request, which (as on GitHub) updates the issue too. */
  addComment(repository: FakeRepository, issue: FakeIssue, body: string, user = 'hubot'): FakeComment {
    const at = this.tick();
    const comment = { id: this.id(), number: issue.number, body, user, created_at: at, updated_at: at };
    repository.comments.push(comment);
    issue.updated_at = at;
    return comment;
  }

  addReviewComment(repository: FakeRepository, pull: FakeIssue, path: string, body: string, user = 'hubot'): FakeReviewComment {
    const at = this.tick();
    const comment = { id: this.id(), number: pull.number, path, body, user, created_at: at, updated_at: at };
    repository.reviewComments.push(comment);
    pull.updated_at = at;
    return comment;
  }

  addReview(repository: FakeRepository, pull: FakeIssue, state: FakeReview['state'], body: string, user = 'monalisa'): FakeReview {
    const at = this.tick();
    const review = { id: this.id(), user, body, state, submitted_at: at };
    repository.reviews.set(pull.number, [...(repository.reviews.get(pull.number) ?? []), review]);
    pull.updated_at = at;
    return review;
  }

  addRelease(repository: FakeRepository, tag: string, name: string, body: string): FakeRelease {
    const release = { id: this.id(), tag_name: tag, name, body, created_at: this.tick() };
    repository.releases.push(release);
    return release;
  }

  addDiscussion(repository: FakeRepository, title: string, body: string, comments: { user: string; body: string }[] = []): FakeDiscussion {
    const at = this.tick();
    const discussion = { id: `D_${this.id()}`, number: repository.issues.length + repository.discussions.length + 100, title, body, user: 'octocat', comments, created_at: at, updated_at: at };
    repository.discussions.push(discussion);
    return discussion;
  }

  /** Edits an item and moves its update time on, as GitHub does. */
  edit<T extends { updated_at: string }>(item: T, change: Partial<T>): T {
    return Object.assign(item, change, { updated_at: this.tick() });
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: Error) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ message: error.message }));
      });
    });
    this.url = await listenOnLoopback(this.server);
    return this;
  }

  async stop(): Promise<void> {
    await closeLoopback(this.server);
    this.server = null;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const body = await readBody(request);
    const record: GitHubRequest = {
      ...recordedRequest(request),
      path: url.pathname.startsWith(`${REST}/`) ? url.pathname.slice(REST.length) : url.pathname,
      status: 0,
      accept: request.headers.accept,
      apiVersion: request.headers['x-github-api-version'] as string | undefined,
    };
    this.requests.push(record);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      const text = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(text);
    };

    if (record.path === '/login/oauth/access_token' && record.method === 'POST') {
      const answer = this.oauth.answer(body.toString('utf8'), request.headers.accept ?? '', (token) => this.tokens.add(token));
      return send(200, answer.body, { 'content-type': answer.contentType });
    }

    const resource = record.path === '/api/graphql' ? 'graphql' : 'core';
    const limits = (remaining: number) => ({
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-used': String(5000 - remaining),
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      'x-ratelimit-resource': resource,
    });
    const token = /^(?:Bearer|token) (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!token || !this.tokens.has(token)) {
      return send(401, { message: 'Bad credentials', documentation_url: resource === 'graphql' ? 'https://docs.github.com/graphql' : 'https://docs.github.com/rest', status: '401' });
    }
    const interruption = this.interruptions.find((candidate) => !candidate.path || candidate.path.test(record.path));
    if (interruption?.pass) interruption.pass--;
    else if (interruption) {
      if ((interruption.times ?? 1) <= 1) this.interruptions.splice(this.interruptions.indexOf(interruption), 1);
      else interruption.times = interruption.times! - 1;
      if (interruption.status >= 500) return send(interruption.status, { message: 'Server Error' });
      const message = interruption.exhausted ? 'API rate limit exceeded for user ID 1.' : 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
      return send(interruption.status, { message, documentation_url: 'https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api', status: String(interruption.status) }, {
        ...limits(interruption.exhausted ? 0 : 4000),
        ...(interruption.retryAfter ? { 'retry-after': interruption.retryAfter } : {}),
      });
    }
    const headers = limits(4999 - (this.requests.length % 1000));

    if (resource === 'graphql') {
      const { variables = {} } = JSON.parse(body.toString('utf8') || '{}') as { variables?: Record<string, unknown> };
      record.variables = variables;
      return send(200, discussionsAnswer(this.repositories.get(`${variables.owner}/${variables.name}`), variables, this.url), headers);
    }
    const answer = this.rest(record, url, request.headers.accept ?? '');
    if (!answer) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' }, headers);
    if ('list' in answer) {
      const perPage = Math.min(this.maxPerPage, Number(url.searchParams.get('per_page') ?? 30) || 30);
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const last = Math.max(1, Math.ceil(answer.list.length / perPage));
      const link = (n: number) => {
        const target = new URL(url);
        target.searchParams.set('page', String(n));
        return `<${target.href}>`;
      };
      const links = [
        ...(page < last ? [`${link(page + 1)}; rel="next"`, `${link(last)}; rel="last"`] : []),
        ...(page > 1 ? [`${link(1)}; rel="first"`, `${link(page - 1)}; rel="prev"`] : []),
      ];
      return send(200, answer.list.slice((page - 1) * perPage, page * perPage), { ...headers, ...(links.length ? { link: links.join(', ') } : {}) });
    }
    if ('raw' in answer) return send(200, answer.raw, { ...headers, 'content-type': 'application/vnd.github.raw+json' });
    return send(answer.status ?? 200, answer.json, headers);
  }

  private rest(record: GitHubRequest, url: URL, accept: string): { list: unknown[] } | { json: unknown; status?: number } | { raw: Buffer } | null {
    const query = url.searchParams;
    if (record.path === '/user') return { json: { login: 'octocat', id: 1, type: 'User', html_url: `${this.url}/octocat` } };
    if (record.path === '/user/repos') return { list: [...this.repositories.values()].sort((a, b) => `${a.owner}/${a.name}`.localeCompare(`${b.owner}/${b.name}`)).map((repository) => repositoryJson(repository, this.url)) };
    const match = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(record.path);
    const repository = match && this.repositories.get(`${match[1]}/${match[2]}`);
    if (!match || !repository) return null;
    const rest = match[3] ?? '';
    const base = `${this.url}/${repository.owner}/${repository.name}`;
    const apiBase = `${this.apiUrl}/repos/${repository.owner}/${repository.name}`;
    const since = query.get('since') ? Date.parse(query.get('since')!) : null;
    const updatedOrder = <T extends { created_at: string; updated_at: string }>(items: T[]) => {
      const key = query.get('sort') === 'updated' ? 'updated_at' : 'created_at';
      const sorted = items.filter((item) => since === null || Date.parse(item.updated_at) >= since).sort((a, b) => Date.parse(a[key]) - Date.parse(b[key]));
      // Issues default to newest first; the comment listings to oldest first.
      const direction = query.get('direction') ?? (record.path.endsWith('/comments') ? 'asc' : 'desc');
      return direction === 'desc' ? sorted.reverse() : sorted;
    };
    const issueJson = (issue: FakeIssue) => ({
      id: issue.id,
      number: issue.number,
      title: issue.title,
      body: issue.body,
      state: issue.state,
      html_url: `${base}/${issue.pull ? 'pull' : 'issues'}/${issue.number}`,
      user: { login: issue.user },
      labels: issue.labels.map((name) => ({ name })),
      assignees: [],
      comments: repository.comments.filter((comment) => comment.number === issue.number).length,
      ...(issue.pull ? { pull_request: { url: `${apiBase}/pulls/${issue.number}`, html_url: `${base}/pull/${issue.number}`, merged_at: null }, draft: false } : {}),
      created_at: issue.created_at,
      updated_at: issue.updated_at,
      closed_at: issue.state === 'closed' ? issue.updated_at : null,
    });
    const issueByNumber = (number: number) => repository.issues.find((issue) => issue.number === number);

    if (rest === '') return { json: repositoryJson(repository, this.url) };
    if (rest === '/issues') {
      const state = query.get('state') ?? 'open';
      return { list: updatedOrder(repository.issues.filter((issue) => state === 'all' || issue.state === state)).map(issueJson) };
    }
    let found = /^\/issues\/(\d+)$/.exec(rest);
    if (found) {
      const issue = issueByNumber(Number(found[1]));
      return issue ? { json: issueJson(issue) } : null;
    }
    if (rest === '/issues/comments') {
      return {
        list: updatedOrder(repository.comments).map((comment) => ({
          id: comment.id,
          body: comment.body,
          user: { login: comment.user },
          html_url: `${base}/${issueByNumber(comment.number)?.pull ? 'pull' : 'issues'}/${comment.number}#issuecomment-${comment.id}`,
          issue_url: `${apiBase}/issues/${comment.number}`,
          created_at: comment.created_at,
          updated_at: comment.updated_at,
        })),
      };
    }
    if (rest === '/pulls/comments') {
      return {
        list: updatedOrder(repository.reviewComments).map((comment) => ({
          id: comment.id,
          body: comment.body,
          path: comment.path,
          line: 1,
          diff_hunk: '@@ -1 +1 @@',
          user: { login: comment.user },
          html_url: `${base}/pull/${comment.number}#discussion_r${comment.id}`,
          pull_request_url: `${apiBase}/pulls/${comment.number}`,
          created_at: comment.created_at,
          updated_at: comment.updated_at,
        })),
      };
    }
    found = /^\/pulls\/(\d+)\/reviews$/.exec(rest);
    if (found) {
      const number = Number(found[1]);
      if (!issueByNumber(number)?.pull) return null;
      return {
        list: (repository.reviews.get(number) ?? []).map((review) => ({
          id: review.id,
          user: { login: review.user },
          body: review.body,
          state: review.state,
          html_url: `${base}/pull/${number}#pullrequestreview-${review.id}`,
          commit_id: 'a'.repeat(40),
          ...(review.state === 'PENDING' ? {} : { submitted_at: review.submitted_at }),
        })),
      };
    }
    if (rest === '/releases') {
      return {
        list: [...repository.releases].reverse().map((release) => ({
          id: release.id,
          tag_name: release.tag_name,
          name: release.name,
          body: release.body,
          draft: false,
          prerelease: false,
          html_url: `${base}/releases/tag/${release.tag_name}`,
          author: { login: 'octocat' },
          created_at: release.created_at,
          published_at: release.created_at,
        })),
      };
    }
    found = /^\/git\/trees\/(.+)$/.exec(rest);
    if (found) {
      if (decodeURIComponent(found[1]!) !== repository.default_branch) return null;
      if (!repository.files.size) return { json: { message: 'Git Repository is empty.', documentation_url: 'https://docs.github.com/rest/git/trees#get-a-tree', status: '409' }, status: 409 };
      return { json: treeJson(repository, apiBase, query.has('recursive')) };
    }
    found = /^\/git\/blobs\/([0-9a-f]{40})$/.exec(rest);
    if (found) {
      const bytes = [...repository.files.values()].find((candidate) => gitBlobSha(candidate) === found![1]);
      if (!bytes) return null;
      if (accept.includes('application/vnd.github.raw')) return { raw: bytes };
      return { json: { sha: found[1], size: bytes.length, url: `${apiBase}/git/blobs/${found[1]}`, content: bytes.toString('base64'), encoding: 'base64' } };
    }
    return null;
  }

}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts);
}
