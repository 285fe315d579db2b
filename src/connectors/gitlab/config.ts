import { z } from 'zod';
import { httpBaseUrl, maxFileBytes } from '../contract/schemas.js';

/** What a gitlab connection is configured with, its pasted token, and the cursor it keeps between runs. */

export const DEFAULT_BASE_URL = 'https://gitlab.com';

/** An http(s) origin, optionally with a path (GitLab under a relative URL root), without user info, query or fragment. */
const baseUrl = httpBaseUrl('https://gitlab.com or https://gitlab.example.com');

export const gitlabConfig = z.strictObject({
  base_url: baseUrl.default(DEFAULT_BASE_URL).meta({ title: 'GitLab URL', description: 'https://gitlab.com, or the address of a self-managed instance (the API is at <url>/api/v4).' }),
  projects: z
    .array(z.string().trim().min(1))
    .default([])
    .meta({ title: 'Projects', description: 'Project paths ("group/subgroup/project") or numeric ids; empty for every project the token is a member of.' }),
  include_issues: z.boolean().default(true).meta({ title: 'Issues', description: 'Sync issues.' }),
  include_merge_requests: z.boolean().default(true).meta({ title: 'Merge requests', description: 'Sync merge requests.' }),
  include_notes: z.boolean().default(true).meta({ title: 'Comments', description: 'Sync the comments (notes) of the synced issues and merge requests; system notes are left out.' }),
  include_wiki: z.boolean().default(true).meta({ title: 'Wiki', description: "Sync the projects' wiki pages." }),
  include_files: z.boolean().default(true).meta({ title: 'Files', description: 'Sync the files of the default branch (text, Markdown, source code, PDF, DOCX).' }),
  max_file_bytes: maxFileBytes(1024 * 1024, 'Larger repository files are skipped.'),
});
export type GitLabConfig = z.infer<typeof gitlabConfig>;

export const gitlabCredentials = z.strictObject({
  access_token: z
    .string()
    .trim()
    .min(1)
    .meta({ title: 'Access token', description: 'A personal, project or group access token with the read_api scope (read_repository for files).', secret: true }),
});
export type GitLabCredentials = z.infer<typeof gitlabCredentials>;

/** The configured URL without a trailing slash: the web root; the API is under `/api/v4`. */
export const webRoot = (config: Pick<GitLabConfig, 'base_url'>) => config.base_url.trim().replace(/\/+$/, '');
export const apiRoot = (config: Pick<GitLabConfig, 'base_url'>) => `${webRoot(config)}/api/v4`;

/** An issue's or merge request's last `updated_at` seen, and the ids of its comments that are entities. */
const issuableState = z.object({ updated_at: z.string(), notes: z.array(z.number().int()) });

/**
 * Issues or merge requests of a project: `since` is the greatest `updated_at` read (the next run lists
 * those updated on or after it), `items` what is known of each by iid.
 */
const issuableCollection = z.object({ since: z.string().nullable(), items: z.record(z.string(), issuableState) });
export type IssuableCollection = z.infer<typeof issuableCollection>;

const projectState = z.object({
  issues: issuableCollection,
  merge_requests: issuableCollection,
  /** Wiki page slug → hash of its title, format and content. */
  wiki: z.record(z.string(), z.string()),
  /** File path → blob SHA, for files that are entities. */
  files: z.record(z.string(), z.string()),
  /** File path → blob SHA and why, for files downloaded but left out (reported skipped again without a download while unchanged). */
  unindexed: z.record(z.string(), z.object({ sha: z.string(), reason: z.string() })),
});
export type ProjectState = z.infer<typeof projectState>;

export const gitlabCursor = z.object({
  version: z.literal(1),
  /** What was read and how (URL, include flags, size limit, text extraction): another value means a full sync. */
  settings: z.string(),
  /** By project id. */
  projects: z.record(z.string(), projectState),
  /** Projects finished by the run that saved this checkpoint (absent on the cursor of a finished run). */
  done: z.array(z.number().int()).optional(),
});
export type GitLabCursor = z.infer<typeof gitlabCursor>;

export const emptyProjectState = (): ProjectState => ({
  issues: { since: null, items: {} },
  merge_requests: { since: null, items: {} },
  wiki: {},
  files: {},
  unindexed: {},
});
