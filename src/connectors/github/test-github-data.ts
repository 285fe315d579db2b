import { createHash } from 'node:crypto';

/**
 * The fake GitHub's data (see TestGitHubServer) and the JSON shapes it answers with: `full-repository`
 * (repos/get), `git-tree` (git/get-tree), and GraphQL's `Repository.discussions` connection.
 */

export interface FakeIssue {
  id: number;
  number: number;
  title: string;
  body: string;
  user: string;
  state: 'open' | 'closed';
  labels: string[];
  pull: boolean;
  created_at: string;
  updated_at: string;
}
export interface FakeComment {
  id: number;
  number: number;
  body: string;
  user: string;
  created_at: string;
  updated_at: string;
}
export interface FakeReviewComment extends FakeComment {
  path: string;
}
export interface FakeReview {
  id: number;
  user: string;
  body: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'PENDING';
  submitted_at: string;
}
export interface FakeRelease {
  id: number;
  tag_name: string;
  name: string;
  body: string;
  created_at: string;
}
export interface FakeDiscussion {
  id: string;
  number: number;
  title: string;
  body: string;
  user: string;
  comments: { user: string; body: string }[];
  created_at: string;
  updated_at: string;
}
export interface FakeRepository {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  description: string;
  default_branch: string;
  has_discussions: boolean;
  created_at: string;
  issues: FakeIssue[];
  comments: FakeComment[];
  reviewComments: FakeReviewComment[];
  /** By pull request number. */
  reviews: Map<number, FakeReview[]>;
  releases: FakeRelease[];
  files: Map<string, Buffer>;
  discussions: FakeDiscussion[];
}

export const gitBlobSha = (bytes: Buffer) => createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');

export function repositoryJson(repository: FakeRepository, web: string) {
  const fullName = `${repository.owner}/${repository.name}`;
  return {
    id: repository.id,
    name: repository.name,
    full_name: fullName,
    owner: { login: repository.owner, html_url: `${web}/${repository.owner}` },
    private: repository.private,
    visibility: repository.private ? 'private' : 'public',
    html_url: `${web}/${fullName}`,
    description: repository.description,
    default_branch: repository.default_branch,
    language: 'TypeScript',
    topics: ['search'],
    archived: false,
    fork: false,
    has_issues: true,
    has_discussions: repository.has_discussions,
    stargazers_count: 3,
    created_at: repository.created_at,
    updated_at: repository.created_at,
  };
}

export function treeJson(repository: FakeRepository, apiBase: string, recursive: boolean) {
  const entries = new Map<string, { path: string; mode: string; type: string; sha: string; size?: number; url: string }>();
  for (const [filePath, bytes] of repository.files) {
    const parts = filePath.split('/');
    if (!recursive && parts.length > 1) continue;
    parts.slice(0, -1).forEach((_, index) => {
      const folder = parts.slice(0, index + 1).join('/');
      entries.set(folder, { path: folder, mode: '040000', type: 'tree', sha: createHash('sha1').update(folder).digest('hex'), url: `${apiBase}/git/trees/${folder}` });
    });
    const sha = gitBlobSha(bytes);
    entries.set(filePath, { path: filePath, mode: '100644', type: 'blob', sha, size: bytes.length, url: `${apiBase}/git/blobs/${sha}` });
  }
  const tree = [...entries.values()].sort((a, b) => a.path.localeCompare(b.path));
  return { sha: createHash('sha1').update(JSON.stringify(tree)).digest('hex'), url: `${apiBase}/git/trees/${repository.default_branch}`, tree, truncated: false };
}

/** The answer to the discussions query (see DISCUSSIONS_QUERY in discussions.ts) for its variables. */
export function discussionsAnswer(repository: FakeRepository | undefined, variables: Record<string, unknown>, web: string) {
  if (!repository) {
    return { data: { repository: null }, errors: [{ type: 'NOT_FOUND', path: ['repository'], locations: [{ line: 2, column: 3 }], message: `Could not resolve to a Repository with the name '${variables.owner}/${variables.name}'.` }] };
  }
  const ordered = [...repository.discussions].sort((a, b) => Date.parse(b.updated_at) - Date.parse(a.updated_at));
  const start = typeof variables.after === 'string' ? Number(Buffer.from(variables.after, 'base64').toString('utf8').replace('cursor:', '')) : 0;
  const first = Math.min(100, Number(variables.first ?? 10));
  const nodes = ordered.slice(start, start + first);
  const cursorOf = (index: number) => Buffer.from(`cursor:${index}`).toString('base64');
  return {
    data: {
      repository: {
        discussions: {
          pageInfo: { hasNextPage: start + first < ordered.length, endCursor: nodes.length ? cursorOf(start + nodes.length) : null },
          nodes: nodes.map((discussion) => ({
            id: discussion.id,
            number: discussion.number,
            title: discussion.title,
            body: discussion.body,
            url: `${web}/${repository.owner}/${repository.name}/discussions/${discussion.number}`,
            createdAt: discussion.created_at,
            updatedAt: discussion.updated_at,
            author: { login: discussion.user },
            category: { name: 'General' },
            comments: { totalCount: discussion.comments.length, nodes: discussion.comments.map((comment) => ({ body: comment.body, createdAt: discussion.created_at, author: { login: comment.user } })) },
          })),
        },
      },
    },
  };
}
