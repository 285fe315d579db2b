import { z } from 'zod';
import { nextPageUrl } from '../../platform/http/link-header.js';
import { SourceRateLimitedError, SourceHttpError } from '../contract/errors.js';
import type { SourceHttpClient, SourceRequestOptions } from '../contract/source-http.js';
import { graphqlUrl } from './schemas.js';

/**
 * GitHub's REST API v3 (and its GraphQL endpoint) over the connection's HTTP client, which attaches
 * the token, retries rate-limited answers and paces requests. Every request names the media type and
 * the API version GitHub documents (docs.github.com/rest/about-the-rest-api/api-versions); lists are
 * paged with the `Link` header's rel="next" (docs.github.com/rest/using-the-rest-api/using-pagination-in-the-rest-api).
 * Answers are parsed by the schemas below, which name only the fields the connector reads.
 */

const API_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };
/** Blobs as their raw bytes instead of base64 in JSON (docs.github.com/rest/git/blobs#get-a-blob). */
const RAW_HEADERS = { ...API_HEADERS, accept: 'application/vnd.github.raw+json' };
export const PAGE_SIZE = 100;

const user = z.object({ login: z.string(), html_url: z.string().optional() });
const time = z.string();

export const repositorySchema = z.object({
  id: z.number(),
  name: z.string(),
  full_name: z.string(),
  owner: user,
  private: z.boolean(),
  visibility: z.string().optional(),
  html_url: z.string(),
  description: z.string().nullable(),
  default_branch: z.string().optional(),
  language: z.string().nullable().optional(),
  topics: z.array(z.string()).optional(),
  archived: z.boolean().optional(),
  fork: z.boolean().optional(),
  has_issues: z.boolean().optional(),
  has_discussions: z.boolean().optional(),
  stargazers_count: z.number().optional(),
  created_at: time,
  updated_at: time,
});
export type Repository = z.infer<typeof repositorySchema>;

const label = z.union([z.string(), z.object({ name: z.string().nullable().optional() })]);

export const issueSchema = z.object({
  id: z.number(),
  number: z.number(),
  title: z.string(),
  body: z.string().nullable().optional(),
  state: z.string(),
  state_reason: z.string().nullable().optional(),
  html_url: z.string(),
  user: user.nullable(),
  labels: z.array(label).optional(),
  assignees: z.array(user).nullable().optional(),
  milestone: z.object({ title: z.string() }).nullable().optional(),
  comments: z.number().optional(),
  draft: z.boolean().optional(),
  /** Present when the issue is a pull request (the issues API lists both). */
  pull_request: z.object({ html_url: z.string().nullable().optional(), merged_at: z.string().nullable().optional() }).optional(),
  created_at: time,
  updated_at: time,
  closed_at: time.nullable().optional(),
});
export type Issue = z.infer<typeof issueSchema>;

export const issueCommentSchema = z.object({
  id: z.number(),
  body: z.string().nullable().optional(),
  html_url: z.string(),
  issue_url: z.string(),
  user: user.nullable(),
  created_at: time,
  updated_at: time,
});
export type IssueComment = z.infer<typeof issueCommentSchema>;

export const reviewCommentSchema = z.object({
  id: z.number(),
  body: z.string(),
  html_url: z.string(),
  pull_request_url: z.string(),
  path: z.string(),
  line: z.number().nullable().optional(),
  diff_hunk: z.string().optional(),
  user: user.nullable(),
  created_at: time,
  updated_at: time,
});
export type ReviewComment = z.infer<typeof reviewCommentSchema>;

export const reviewSchema = z.object({
  id: z.number(),
  body: z.string().nullable(),
  state: z.string(),
  html_url: z.string(),
  user: user.nullable(),
  submitted_at: time.nullable().optional(),
  commit_id: z.string().nullable().optional(),
});
export type Review = z.infer<typeof reviewSchema>;

export const releaseSchema = z.object({
  id: z.number(),
  tag_name: z.string(),
  name: z.string().nullable(),
  body: z.string().nullable().optional(),
  draft: z.boolean(),
  prerelease: z.boolean(),
  html_url: z.string(),
  author: user.nullable().optional(),
  created_at: time,
  published_at: time.nullable(),
});
export type Release = z.infer<typeof releaseSchema>;

export const treeSchema = z.object({
  sha: z.string(),
  truncated: z.boolean(),
  tree: z.array(z.object({ path: z.string(), mode: z.string(), type: z.string(), sha: z.string(), size: z.number().optional() })),
});
export type Tree = z.infer<typeof treeSchema>;

/** The answer is not what GitHub's API returns: said with the status and the URL (never a header). */
function unexpected(status: number, url: string, error: z.ZodError): SourceHttpError {
  const issue = error.issues[0];
  return new SourceHttpError(status, url, `not a GitHub API answer (${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unexpected shape'})`);
}

export class GitHubApi {
  constructor(
    private readonly http: SourceHttpClient,
    readonly apiUrl: string,
  ) {}

  private url(path: string): string {
    return path.startsWith('http://') || path.startsWith('https://') ? path : `${this.apiUrl}${path}`;
  }

  /** One JSON resource; null when its status is one of `missing` (e.g. 404: gone, or not visible to the token). */
  async get<T>(path: string, schema: z.ZodType<T>, options: { query?: SourceRequestOptions['query']; missing?: number[] } = {}): Promise<T | null> {
    const response = await this.http.getJson(this.url(path), { query: options.query, headers: API_HEADERS, acceptStatuses: options.missing });
    if (options.missing?.includes(response.status)) return null;
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) throw unexpected(response.status, response.url, parsed.error);
    return parsed.data;
  }

  async require<T>(path: string, schema: z.ZodType<T>, query?: SourceRequestOptions['query']): Promise<T> {
    return (await this.get(path, schema, { query }))!;
  }

  /**
   * One page of a list and the next page's URL (rel="next"). `missing` statuses are an empty last
   * page (410: the repository has that feature disabled).
   */
  async page<T>(pathOrUrl: string, item: z.ZodType<T>, query?: SourceRequestOptions['query'], missing: number[] = []): Promise<{ items: T[]; next: string | null }> {
    const response = await this.http.getJson(this.url(pathOrUrl), { query: query && { ...query, per_page: PAGE_SIZE }, headers: API_HEADERS, acceptStatuses: missing });
    if (missing.includes(response.status)) return { items: [], next: null };
    const parsed = z.array(item).safeParse(response.body);
    if (!parsed.success) throw unexpected(response.status, response.url, parsed.error);
    const next = nextPageUrl(response.headers.get('link'));
    return { items: parsed.data, next: next && new URL(next, response.url).href };
  }

  /** A whole list, page by page (the first page asked for with `query`, the next ones by their links). */
  async *pages<T>(path: string, item: z.ZodType<T>, query: SourceRequestOptions['query'] = {}, missing: number[] = []): AsyncGenerator<T[]> {
    let page = await this.page(path, item, query, missing);
    yield page.items;
    while (page.next) {
      page = await this.page(page.next, item, undefined, missing);
      yield page.items;
    }
  }

  /** A blob's bytes, at most `maxBytes`. */
  async blob(fullName: string, sha: string, maxBytes: number): Promise<Buffer> {
    const response = await this.http.getBytes(this.url(`/repos/${fullName}/git/blobs/${sha}`), { headers: RAW_HEADERS, maxBytes });
    return response.bytes;
  }

  /**
   * A GraphQL query (docs.github.com/graphql/guides/forming-calls-with-graphql). GraphQL reports
   * most failures in `errors` with a 200: a RATE_LIMITED type is a rate limit like the REST one's;
   * FORBIDDEN / NOT_FOUND are returned to the caller (a token without discussion access), the rest thrown.
   */
  async graphql<T>(query: string, variables: Record<string, unknown>, data: z.ZodType<T>): Promise<{ data: T | null; errors: GraphqlError[] }> {
    const url = graphqlUrl(this.apiUrl);
    const response = await this.http.postJson(url, { query, variables }, { headers: API_HEADERS });
    const parsed = graphqlAnswer(data).safeParse(response.body);
    if (!parsed.success) throw unexpected(response.status, response.url, parsed.error);
    const errors = parsed.data.errors ?? [];
    if (errors.some((error) => error.type === 'RATE_LIMITED')) {
      const reset = Number(response.headers.get('x-ratelimit-reset'));
      throw new SourceRateLimitedError('GitHub GraphQL rate limit exceeded', Number.isFinite(reset) && reset > 0 ? Math.max(1, Math.ceil(reset - Date.now() / 1000)) : 60);
    }
    const unhandled = errors.filter((error) => error.type !== 'FORBIDDEN' && error.type !== 'NOT_FOUND');
    if (unhandled.length) throw new SourceHttpError(response.status, response.url, unhandled.map((error) => error.message).join('; ').slice(0, 300));
    return { data: parsed.data.data ?? null, errors };
  }
}

const graphqlError = z.object({ type: z.string().optional(), message: z.string() });
export type GraphqlError = z.infer<typeof graphqlError>;
const graphqlAnswer = <T>(data: z.ZodType<T>) => z.object({ data: data.nullable().optional(), errors: z.array(graphqlError).optional() });
