import type { Breadcrumb, SourceEntity } from '../connector.js';
import type { Issue, IssueComment, Release, Repository, Review, ReviewComment } from './github-api.js';

/**
 * GitHub items as entities. Ids follow the items' paths on GitHub (`owner/name/issues/7`,
 * `owner/name/pull/8`…), so they are stable and unique per connection; breadcrumbs are the owner,
 * the repository and, for comments and reviews, their issue or pull request.
 */

const date = (value: string | null | undefined) => (value ? new Date(value) : null);
const login = (user: { login: string } | null | undefined) => user?.login ?? null;
const labelNames = (issue: Issue) => (issue.labels ?? []).map((label) => (typeof label === 'string' ? label : (label.name ?? ''))).filter(Boolean);

/** The repository-wide parts of its items: breadcrumbs and visibility. */
export interface RepositoryScope {
  repository: Repository;
  breadcrumbs: Breadcrumb[];
  access: { viewers: null; isPublic: boolean };
}

export function repositoryScope(repository: Repository): RepositoryScope {
  const owner: Breadcrumb = { entityId: repository.owner.login, name: repository.owner.login, entityType: 'owner' };
  // Who may read a private repository is not listed to a reader's token: no viewers, not public.
  const isPublic = repository.visibility ? repository.visibility === 'public' : !repository.private;
  return {
    repository,
    breadcrumbs: [owner, { entityId: repository.full_name, name: repository.name, entityType: 'repository' }],
    access: { viewers: null, isPublic },
  };
}

export const issueEntityId = (fullName: string, kind: 'issues' | 'pull', number: number) => `${fullName}/${kind}/${number}`;
export const issueKind = (issue: Issue): 'issues' | 'pull' => (issue.pull_request ? 'pull' : 'issues');

export function repositoryEntity(scope: RepositoryScope): SourceEntity {
  const { repository } = scope;
  const topics = repository.topics ?? [];
  const text = [repository.full_name, repository.description ?? '', topics.length ? `Topics: ${topics.join(', ')}` : '', repository.language ? `Language: ${repository.language}` : '']
    .filter(Boolean)
    .join('\n\n');
  return {
    entityId: repository.full_name,
    entityType: 'repository',
    name: repository.name,
    breadcrumbs: scope.breadcrumbs.slice(0, 1),
    createdAt: date(repository.created_at),
    updatedAt: date(repository.updated_at),
    text,
    fields: {
      full_name: repository.full_name,
      description: repository.description,
      default_branch: repository.default_branch ?? null,
      language: repository.language ?? null,
      topics,
      visibility: repository.visibility ?? (repository.private ? 'private' : 'public'),
      archived: repository.archived ?? false,
      fork: repository.fork ?? false,
      stars: repository.stargazers_count ?? null,
    },
    webUrl: repository.html_url,
    access: scope.access,
  };
}

/** An issue or a pull request, as the issues API lists both. */
export function issueEntity(scope: RepositoryScope, issue: Issue): SourceEntity {
  const kind = issueKind(issue);
  const fields = {
    number: issue.number,
    state: issue.state,
    state_reason: issue.state_reason ?? null,
    author: login(issue.user),
    labels: labelNames(issue),
    assignees: (issue.assignees ?? []).map((assignee) => assignee.login),
    milestone: issue.milestone?.title ?? null,
    comments: issue.comments ?? 0,
    closed_at: issue.closed_at ?? null,
    ...(kind === 'pull' ? { merged_at: issue.pull_request?.merged_at ?? null, draft: issue.draft ?? false } : {}),
  };
  return {
    entityId: issueEntityId(scope.repository.full_name, kind, issue.number),
    entityType: kind === 'pull' ? 'pull_request' : 'issue',
    name: issue.title,
    breadcrumbs: scope.breadcrumbs,
    createdAt: date(issue.created_at),
    updatedAt: date(issue.updated_at),
    text: `${issue.title}\n\n${issue.body ?? ''}`.trim(),
    fields,
    webUrl: issue.html_url,
    access: scope.access,
  };
}

/** The issue or pull request a comment's page belongs to, from its html_url (…/issues/7#issuecomment-1, …/pull/8#discussion_r2). */
export function parentOf(htmlUrl: string): { kind: 'issues' | 'pull'; number: number } | null {
  const match = /\/(issues|pull)\/(\d+)(?:[#/?]|$)/.exec(htmlUrl);
  return match ? { kind: match[1] as 'issues' | 'pull', number: Number(match[2]) } : null;
}

export function parentBreadcrumb(fullName: string, parent: { kind: 'issues' | 'pull'; number: number }, title: string | null): Breadcrumb {
  return {
    entityId: issueEntityId(fullName, parent.kind, parent.number),
    name: title ?? `#${parent.number}`,
    entityType: parent.kind === 'pull' ? 'pull_request' : 'issue',
  };
}

export function issueCommentEntity(scope: RepositoryScope, comment: IssueComment, parent: Breadcrumb): SourceEntity {
  return {
    entityId: `${scope.repository.full_name}/issues/comments/${comment.id}`,
    entityType: 'comment',
    name: `Comment by ${login(comment.user) ?? 'ghost'} on ${parent.name}`,
    breadcrumbs: [...scope.breadcrumbs, parent],
    createdAt: date(comment.created_at),
    updatedAt: date(comment.updated_at),
    text: comment.body ?? '',
    fields: { kind: 'issue_comment', author: login(comment.user), parent_id: parent.entityId },
    webUrl: comment.html_url,
    access: scope.access,
  };
}

export function reviewCommentEntity(scope: RepositoryScope, comment: ReviewComment, parent: Breadcrumb): SourceEntity {
  return {
    entityId: `${scope.repository.full_name}/pulls/comments/${comment.id}`,
    entityType: 'comment',
    name: `Review comment by ${login(comment.user) ?? 'ghost'} on ${comment.path}`,
    breadcrumbs: [...scope.breadcrumbs, parent],
    createdAt: date(comment.created_at),
    updatedAt: date(comment.updated_at),
    text: `${comment.path}${comment.line ? `:${comment.line}` : ''}\n\n${comment.body}`,
    fields: { kind: 'review_comment', author: login(comment.user), parent_id: parent.entityId, path: comment.path, line: comment.line ?? null, diff_hunk: comment.diff_hunk ?? null },
    webUrl: comment.html_url,
    access: scope.access,
  };
}

export function reviewEntity(scope: RepositoryScope, pullNumber: number, review: Review, parent: Breadcrumb): SourceEntity {
  const author = login(review.user) ?? 'ghost';
  const verdict = review.state.toLowerCase().replace(/_/g, ' ');
  return {
    entityId: `${issueEntityId(scope.repository.full_name, 'pull', pullNumber)}/reviews/${review.id}`,
    entityType: 'review',
    name: `Review by ${author} (${verdict}) on ${parent.name}`,
    breadcrumbs: [...scope.breadcrumbs, parent],
    createdAt: date(review.submitted_at),
    updatedAt: date(review.submitted_at),
    // An approval without words still says something: who approved what.
    text: review.body?.trim() ? review.body : `${author}: ${verdict}`,
    fields: { state: review.state, author: login(review.user), parent_id: parent.entityId, commit_id: review.commit_id ?? null },
    webUrl: review.html_url,
    access: scope.access,
  };
}

export const releaseEntityId = (fullName: string, id: number) => `${fullName}/releases/${id}`;

export function releaseEntity(scope: RepositoryScope, release: Release): SourceEntity {
  const name = release.name?.trim() || release.tag_name;
  return {
    entityId: releaseEntityId(scope.repository.full_name, release.id),
    entityType: 'release',
    name,
    breadcrumbs: scope.breadcrumbs,
    createdAt: date(release.created_at),
    updatedAt: date(release.published_at ?? release.created_at),
    text: `${name}\n\n${release.body ?? ''}`.trim(),
    fields: { tag_name: release.tag_name, draft: release.draft, prerelease: release.prerelease, author: login(release.author), published_at: release.published_at },
    webUrl: release.html_url,
    access: scope.access,
  };
}
