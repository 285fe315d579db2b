import { z } from 'zod';
import { httpBaseUrl, maxFileBytes } from '../contract/schemas.js';

/**
 * What a GitHub connection is configured with, the token pasted instead of OAuth, and the cursor
 * kept between runs.
 */

export const GITHUB_API_URL = 'https://api.github.com';

/** The kinds of items a connection can include, each behind an `include_<kind>` flag. */
export const INCLUDABLE = ['issues', 'pull_requests', 'comments', 'reviews', 'discussions', 'releases', 'files'] as const;
export type Includable = (typeof INCLUDABLE)[number];

const includeFlag = (title: string, description: string) => z.boolean().default(true).meta({ title, description });

const apiUrl = httpBaseUrl('https://api.github.com or https://github.example.com/api/v3');

export const configSchema = z.strictObject({
  repositories: z
    .array(z.string().trim().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'Must be "owner/name"'))
    .default([])
    .meta({ title: 'Repositories', description: 'Repositories as "owner/name". Empty: every repository the token can see (GET /user/repos).' }),
  include_issues: includeFlag('Issues', 'Index issues.'),
  include_pull_requests: includeFlag('Pull requests', 'Index pull requests.'),
  include_comments: includeFlag('Comments', 'Index the comments of issues and pull requests, and review comments on pull request diffs.'),
  include_reviews: includeFlag('Reviews', 'Index pull request reviews (read again for each pull request that changed).'),
  include_discussions: includeFlag('Discussions', 'Index discussions with their comments (GraphQL API; the token needs read:discussion or discussions read access).'),
  include_releases: includeFlag('Releases', 'Index releases and their notes.'),
  include_files: includeFlag('Files', 'Index the files of the default branch (text, Markdown, code, PDF, DOCX, HTML).'),
  max_file_bytes: maxFileBytes(1024 * 1024),
  api_url: apiUrl
    .default(GITHUB_API_URL)
    .meta({ title: 'API URL', description: 'https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server.' }),
});
export type GitHubConfig = z.infer<typeof configSchema>;

export const credentialsSchema = z.strictObject({
  personal_access_token: z
    .string()
    .trim()
    .min(1)
    .meta({ title: 'Personal access token', description: 'A classic token (scopes repo, read:org, read:discussion) or a fine-grained token with read access to contents, issues, pull requests, discussions and metadata.', secret: true }),
});
export type GitHubCredentials = z.infer<typeof credentialsSchema>;

/**
 * How far a listing ordered by `updated_at` was read: the newest time read, and the ids read at
 * exactly that time (GitHub's `since` includes it, and times are to the second), so the next read
 * starts right after without skipping or repeating an item.
 */
export const markSchema = z.strictObject({ at: z.string(), ids: z.array(z.string()) });
export type Mark = z.infer<typeof markSchema>;

export const filesStateSchema = z.strictObject({
  /** Text extraction version and size limit the paths were read with: another one reads them again. */
  extraction: z.number().int(),
  max_bytes: z.number().int(),
  /** Path → blob sha of each indexed file. */
  paths: z.record(z.string(), z.string()),
});

export const repositoryStateSchema = z.strictObject({
  /** Issues and pull requests: one listing (GitHub lists pull requests among issues). */
  issues: markSchema.nullable(),
  issue_comments: markSchema.nullable(),
  review_comments: markSchema.nullable(),
  discussions: markSchema.nullable(),
  /** A discussions listing (newest first) stopped half-way: where it continues and the mark it ends with. */
  discussions_pending: z.strictObject({ after: z.string(), top: markSchema }).nullable(),
  /** Release id → digest of what was indexed (releases carry no update time). */
  releases: z.record(z.string(), z.string()),
  files: filesStateSchema.nullable(),
});
export type RepositoryState = z.infer<typeof repositoryStateSchema>;

export const cursorSchema = z.strictObject({
  version: z.literal(1),
  /** The server and the kinds included: a cursor of another server or selection says nothing of this one. */
  api_url: z.string(),
  include: z.array(z.enum(INCLUDABLE)),
  /** By repository full name ("owner/name"). */
  repositories: z.record(z.string(), repositoryStateSchema),
});
export type GitHubCursor = z.infer<typeof cursorSchema>;

export const emptyRepositoryState = (): RepositoryState => ({
  issues: null,
  issue_comments: null,
  review_comments: null,
  discussions: null,
  discussions_pending: null,
  releases: {},
  files: null,
});

export const includedKinds = (config: GitHubConfig): Includable[] => INCLUDABLE.filter((kind) => config[`include_${kind}`]);

/**
 * The browser side of a GitHub server: github.com for api.github.com, the host itself for GitHub
 * Enterprise Server (whose REST API is under /api/v3).
 */
export function webOrigin(apiUrlValue: string): string {
  const url = new URL(apiUrlValue);
  return url.hostname === 'api.github.com' ? 'https://github.com' : url.origin;
}

/** GraphQL is at api.github.com/graphql, and at /api/graphql beside Enterprise Server's /api/v3. */
export function graphqlUrl(apiUrlValue: string): string {
  return /\/api\/v3$/.test(apiUrlValue) ? apiUrlValue.replace(/\/api\/v3$/, '/api/graphql') : `${apiUrlValue}/graphql`;
}
