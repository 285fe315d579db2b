import { createHash } from 'node:crypto';
import { SourceConfigError, type SourceItem, type SourceRun, type SyncContext } from '../connector.js';
import { readDiscussions } from './discussions.js';
import {
  type RepositoryScope,
  issueCommentEntity,
  issueEntity,
  issueKind,
  parentBreadcrumb,
  parentOf,
  releaseEntity,
  releaseEntityId,
  repositoryEntity,
  repositoryScope,
  reviewCommentEntity,
  reviewEntity,
} from './entities.js';
import { readFiles } from './files.js';
import { GitHubApi, issueCommentSchema, issueSchema, type Repository, releaseSchema, repositorySchema, reviewCommentSchema, reviewSchema } from './github-api.js';
import { advance, updatedSince } from './marks.js';
import { emptyRepositoryState, type GitHubConfig, type GitHubCredentials, type GitHubCursor, includedKinds, type RepositoryState } from './schemas.js';

/**
 * A GitHub run. Without a cursor it reads everything and is `complete` (what it does not see is
 * deleted). With one it is incremental: per repository, issues and pull requests (one listing),
 * issue comments and review comments from their `since` marks, discussions down to theirs, reviews
 * of the pull requests that changed, releases and files compared with what was indexed (deletions
 * of those two are reported). Each listing saves its mark after each page as a checkpoint, so a
 * stopped run continues where it was. A cursor of another server or selection of kinds, or one
 * naming a repository no longer synced (whose issues and comments it cannot list), makes the run a
 * full one.
 */

type Context = SyncContext<GitHubConfig, GitHubCredentials, GitHubCursor>;

export function githubRun(context: Context): SourceRun<GitHubCursor> {
  const { config } = context;
  const next: GitHubCursor = { version: 1, api_url: config.api_url, include: includedKinds(config), repositories: {} };
  const usable = context.cursor && context.cursor.api_url === config.api_url && sameKinds(context.cursor.include, next.include) ? context.cursor : null;
  const run = { complete: usable === null };
  return {
    // Decided once the repositories are listed, before the first item: it only ever turns true then.
    get complete() {
      return run.complete;
    },
    nextCursor: () => next,
    items: readAll(context, usable, next, run),
  };
}

const sameKinds = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((kind) => b.includes(kind));

async function listRepositories(api: GitHubApi, config: GitHubConfig): Promise<Repository[]> {
  if (!config.repositories.length) {
    const repositories: Repository[] = [];
    for await (const page of api.pages('/user/repos', repositorySchema, { sort: 'full_name' })) repositories.push(...page);
    return repositories;
  }
  const repositories: Repository[] = [];
  for (const fullName of config.repositories) {
    const repository = await api.get(`/repos/${fullName}`, repositorySchema, { missing: [404] });
    if (!repository) throw new SourceConfigError('repositories', `${fullName}: no such repository, or the token cannot see it`);
    repositories.push(repository);
  }
  return repositories;
}

async function* readAll(context: Context, usable: GitHubCursor | null, next: GitHubCursor, run: { complete: boolean }): AsyncGenerator<SourceItem> {
  const api = new GitHubApi(context.http, context.config.api_url);
  const repositories = [...new Map((await listRepositories(api, context.config)).map((repository) => [repository.full_name, repository])).values()];
  let previous = usable?.repositories ?? {};
  const dropped = Object.keys(previous).filter((fullName) => !repositories.some((repository) => repository.full_name === fullName));
  if (dropped.length) {
    context.logger.info({ source: 'github', repositories: dropped }, 'github: repositories no longer synced, reading everything so their items are removed');
    previous = {};
    run.complete = true;
  }
  // Repositories not reached yet keep their state, so a checkpoint never forgets where they were.
  for (const repository of repositories) next.repositories[repository.full_name] = structuredClone(previous[repository.full_name]) ?? emptyRepositoryState();
  const checkpoint = () => context.checkpoint(structuredClone(next));
  for (const repository of repositories) {
    context.signal.throwIfAborted();
    yield* readRepository(context, api, repositoryScope(repository), next.repositories[repository.full_name]!, checkpoint);
  }
}

async function* readRepository(context: Context, api: GitHubApi, scope: RepositoryScope, state: RepositoryState, checkpoint: () => void): AsyncGenerator<SourceItem> {
  const { config } = context;
  const fullName = scope.repository.full_name;
  yield repositoryEntity(scope);
  const titles = new IssueTitles(api, fullName);

  if (config.include_issues || config.include_pull_requests || config.include_reviews) {
    for await (const page of updatedSince(api, `/repos/${fullName}/issues`, issueSchema, () => state.issues, { state: 'all' })) {
      for (const issue of page) {
        const kind = issueKind(issue);
        titles.remember(kind, issue.number, issue.title);
        if (kind === 'issues' ? config.include_issues : config.include_pull_requests) yield issueEntity(scope, issue);
        if (kind === 'pull' && config.include_reviews) {
          const parent = parentBreadcrumb(fullName, { kind, number: issue.number }, issue.title);
          for await (const reviews of api.pages(`/repos/${fullName}/pulls/${issue.number}/reviews`, reviewSchema)) {
            // A pending review is its author's draft, seen by no one else.
            for (const review of reviews) if (review.state !== 'PENDING') yield reviewEntity(scope, issue.number, review, parent);
          }
        }
        state.issues = advance(state.issues, String(issue.id), issue.updated_at);
      }
      checkpoint();
    }
  }

  if (config.include_comments) {
    for await (const page of updatedSince(api, `/repos/${fullName}/issues/comments`, issueCommentSchema, () => state.issue_comments)) {
      for (const comment of page) {
        const parent = parentOf(comment.html_url) ?? { kind: 'issues' as const, number: Number(comment.issue_url.split('/').pop()) };
        yield issueCommentEntity(scope, comment, parentBreadcrumb(fullName, parent, await titles.of(parent.kind, parent.number)));
        state.issue_comments = advance(state.issue_comments, String(comment.id), comment.updated_at);
      }
      checkpoint();
    }
    for await (const page of updatedSince(api, `/repos/${fullName}/pulls/comments`, reviewCommentSchema, () => state.review_comments)) {
      for (const comment of page) {
        const number = Number(comment.pull_request_url.split('/').pop());
        yield reviewCommentEntity(scope, comment, parentBreadcrumb(fullName, { kind: 'pull', number }, await titles.of('pull', number)));
        state.review_comments = advance(state.review_comments, String(comment.id), comment.updated_at);
      }
      checkpoint();
    }
  }

  // `has_discussions` is absent on older Enterprise servers: ask GraphQL then.
  if (config.include_discussions && scope.repository.has_discussions !== false) {
    const refused = yield* readDiscussions(api, scope, state, checkpoint);
    if (refused) context.reportSkipped?.({ entityId: `${fullName}/discussions`, reason: 'discussions not readable', detail: refused });
  }

  if (config.include_releases) yield* readReleases(api, scope, state, checkpoint);

  if (config.include_files) {
    yield* readFiles(api, scope, state, { maxBytes: config.max_file_bytes, checkpoint, reportSkipped: context.reportSkipped });
    checkpoint();
  }
}

/**
 * Releases carry no update time and are few: all are listed each run, each kept when its digest is
 * the one indexed, and the ones gone deleted. The state is saved once the listing is whole.
 */
async function* readReleases(api: GitHubApi, scope: RepositoryScope, state: RepositoryState, checkpoint: () => void): AsyncGenerator<SourceItem> {
  const fullName = scope.repository.full_name;
  const seen: Record<string, string> = {};
  for await (const page of api.pages(`/repos/${fullName}/releases`, releaseSchema)) {
    for (const release of page) {
      const entity = releaseEntity(scope, release);
      const digest = createHash('sha256').update(JSON.stringify([entity.name, entity.text, entity.fields, entity.webUrl])).digest('base64url');
      const id = String(release.id);
      seen[id] = digest;
      yield state.releases[id] === digest ? { keep: entity.entityId } : entity;
    }
  }
  for (const id of Object.keys(state.releases)) if (!(id in seen)) yield { delete: releaseEntityId(fullName, Number(id)) };
  state.releases = seen;
  checkpoint();
}

/** Issue and pull request titles for the breadcrumbs of comments: those listed in this run, or asked for once. */
class IssueTitles {
  private readonly titles = new Map<string, Promise<string | null> | string>();

  constructor(
    private readonly api: GitHubApi,
    private readonly fullName: string,
  ) {}

  remember(kind: 'issues' | 'pull', number: number, title: string): void {
    this.titles.set(`${kind}/${number}`, title);
  }

  async of(kind: 'issues' | 'pull', number: number): Promise<string | null> {
    const key = `${kind}/${number}`;
    let title = this.titles.get(key);
    if (title === undefined) {
      // The issues endpoint answers for pull requests too; 404/410: deleted, or issues turned off.
      title = this.api.get(`/repos/${this.fullName}/issues/${number}`, issueSchema, { missing: [404, 410] }).then((issue) => issue?.title ?? null);
      this.titles.set(key, title);
    }
    return title;
  }
}
