import { z } from 'zod';
import { nextPageUrl } from '../../platform/http/link-header.js';
import { SourceConfigError } from '../contract/errors.js';
import type { SourceHttpClient, SourceJsonResponse } from '../contract/source-http.js';
import { apiRoot, type GitLabConfig } from './config.js';

/**
 * GitLab's REST API v4 as the connector reads it (doc/api/*.md in gitlabhq/gitlabhq): the objects it
 * uses, typed, and the two pagination styles — offset pages (`Link` rel="next", else `x-next-page`)
 * and keyset pages (`Link` rel="next" only).
 */

const user = z.object({ id: z.number(), username: z.string(), name: z.string().nullish() });

export const gitlabProject = z.object({
  id: z.number().int(),
  name: z.string(),
  name_with_namespace: z.string().nullish(),
  path_with_namespace: z.string(),
  description: z.string().nullish(),
  default_branch: z.string().nullish(),
  visibility: z.string().nullish(),
  web_url: z.string(),
  namespace: z.object({ id: z.number(), name: z.string(), full_path: z.string(), kind: z.string().nullish() }),
  created_at: z.string().nullish(),
  last_activity_at: z.string().nullish(),
  empty_repo: z.boolean().nullish(),
  archived: z.boolean().nullish(),
  topics: z.array(z.string()).nullish(),
  // Features: the older booleans, and the access levels that replace them ('disabled' | 'private' | 'enabled').
  issues_enabled: z.boolean().nullish(),
  merge_requests_enabled: z.boolean().nullish(),
  wiki_enabled: z.boolean().nullish(),
  issues_access_level: z.string().nullish(),
  merge_requests_access_level: z.string().nullish(),
  wiki_access_level: z.string().nullish(),
  repository_access_level: z.string().nullish(),
});
export type GitLabProject = z.infer<typeof gitlabProject>;

/** An issue or a merge request (the fields both have, and the merge request's branches). */
export const gitlabIssuable = z.object({
  id: z.number().int(),
  iid: z.number().int(),
  title: z.string(),
  description: z.string().nullish(),
  state: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  closed_at: z.string().nullish(),
  merged_at: z.string().nullish(),
  labels: z.array(z.string()).default([]),
  milestone: z.object({ title: z.string() }).nullish(),
  author: user.nullish(),
  assignees: z.array(user).nullish(),
  web_url: z.string(),
  confidential: z.boolean().nullish(),
  references: z.object({ full: z.string() }).nullish(),
  source_branch: z.string().nullish(),
  target_branch: z.string().nullish(),
  draft: z.boolean().nullish(),
});
export type GitLabIssuable = z.infer<typeof gitlabIssuable>;

export const gitlabNote = z.object({
  id: z.number().int(),
  body: z.string(),
  system: z.boolean(),
  author: user.nullish(),
  created_at: z.string(),
  updated_at: z.string().nullish(),
  internal: z.boolean().nullish(),
});
export type GitLabNote = z.infer<typeof gitlabNote>;

export const gitlabWikiPage = z.object({ slug: z.string(), title: z.string(), format: z.string().nullish(), content: z.string().default('') });
export type GitLabWikiPage = z.infer<typeof gitlabWikiPage>;

export const gitlabTreeEntry = z.object({ id: z.string(), name: z.string(), type: z.string(), path: z.string(), mode: z.string() });

/** The kinds of issuables, by their API path. */
export type IssuableKind = 'issues' | 'merge_requests';

/** A URL-encoded project id or path (`group%2Fproject`), as path parameters must be. */
export const projectRef = (idOrPath: string | number) => encodeURIComponent(String(idOrPath));

export class GitLabApi {
  readonly root: string;

  constructor(
    private readonly http: SourceHttpClient,
    config: GitLabConfig,
  ) {
    this.root = apiRoot(config);
  }

  async get<T>(path: string, schema: z.ZodType<T>, options: { query?: Record<string, string | number | boolean | undefined>; acceptStatuses?: number[] } = {}): Promise<{ value: T | null; response: SourceJsonResponse<unknown> }> {
    const response = await this.http.getJson(`${this.root}${path}`, options);
    if (response.status < 200 || response.status >= 300) return { value: null, response };
    return { value: parseAnswer(schema, response.body, path), response };
  }

  /**
   * Every page of a listing, one array at a time (none when the first answer's status is in `emptyOn`,
   * such as an empty repository's `404 Tree Not Found`). The next page is the `Link` header's rel="next"
   * (offset and keyset pagination both give it), else `x-next-page` (offset pagination). A next link
   * elsewhere than the API's origin is not followed: the token would not go there, nor should the run.
   */
  async *pages<T>(
    path: string,
    item: z.ZodType<T>,
    query: Record<string, string | number | boolean | undefined>,
    { emptyOn = [] }: { emptyOn?: number[] } = {},
  ): AsyncGenerator<{ items: T[]; response: SourceJsonResponse<unknown> }> {
    let url: string | null = `${this.root}${path}`;
    let options: { query?: typeof query; acceptStatuses?: number[] } = { query, acceptStatuses: emptyOn };
    const origin = new URL(this.root).origin;
    while (url) {
      const response: SourceJsonResponse<unknown> = await this.http.getJson(url, options);
      if (emptyOn.includes(response.status)) return;
      yield { items: parseAnswer(z.array(item), response.body, path), response };
      const link = nextPageUrl(response.headers.get('link'));
      const nextPage = response.headers.get('x-next-page');
      if (link && new URL(link, response.url).origin === origin) {
        url = new URL(link, response.url).href;
        options = { acceptStatuses: emptyOn };
      } else if (nextPage && /^\d+$/.test(nextPage)) {
        const next = new URL(response.url);
        next.searchParams.set('page', nextPage);
        url = next.href;
        options = { acceptStatuses: emptyOn };
      } else {
        url = null;
      }
    }
  }

  /** A project by id or path; SourceConfigError on `projects` when the token cannot see it. */
  async project(idOrPath: string): Promise<GitLabProject> {
    const { value } = await this.get(`/projects/${projectRef(idOrPath)}`, gitlabProject, { acceptStatuses: [404] });
    if (!value) throw new SourceConfigError('projects', `GitLab has no project "${idOrPath}" that this token can read`);
    return value;
  }
}

/** A body that is not what GitLab documents: the run fails saying where, rather than indexing nonsense. */
function parseAnswer<T>(schema: z.ZodType<T>, body: unknown, path: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new Error(`GitLab answered ${path} with an unexpected body (${issue.path.join('.') || 'the body'}: ${issue.message})`);
}
