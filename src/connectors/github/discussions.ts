import { z } from 'zod';
import type { SourceEntity } from '../connector.js';
import type { RepositoryScope } from './entities.js';
import type { GitHubApi } from './github-api.js';
import { advance, isAfter } from './marks.js';
import type { RepositoryState } from './schemas.js';

/**
 * Discussions, which GitHub serves only over GraphQL (docs.github.com/graphql/guides/using-the-graphql-api-for-discussions):
 * `Repository.discussions`, newest update first, read until the mark of the previous run. Each
 * discussion is one entity whose text holds its first comments (the thread an agent needs).
 */

export const DISCUSSIONS_QUERY = `query RepositoryDiscussions($owner: String!, $name: String!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussions(first: $first, after: $after, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes {
        id number title body url createdAt updatedAt
        author { login }
        category { name }
        comments(first: ${50}) { totalCount nodes { body createdAt author { login } } }
      }
    }
  }
}`;
const PAGE_SIZE = 25;

const author = z.object({ login: z.string() }).nullable();
const discussionSchema = z.object({
  id: z.string(),
  number: z.number(),
  title: z.string(),
  body: z.string(),
  url: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  author,
  category: z.object({ name: z.string() }).nullable(),
  comments: z.object({ totalCount: z.number(), nodes: z.array(z.object({ body: z.string(), createdAt: z.string(), author })) }),
});
type Discussion = z.infer<typeof discussionSchema>;

const answerSchema = z.object({
  repository: z
    .object({
      discussions: z.object({ pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }), nodes: z.array(discussionSchema) }),
    })
    .nullable(),
});

function discussionEntity(scope: RepositoryScope, discussion: Discussion): SourceEntity {
  const thread = discussion.comments.nodes.map((comment) => `${comment.author?.login ?? 'ghost'}: ${comment.body}`);
  return {
    entityId: `${scope.repository.full_name}/discussions/${discussion.number}`,
    entityType: 'discussion',
    name: discussion.title,
    breadcrumbs: scope.breadcrumbs,
    createdAt: new Date(discussion.createdAt),
    updatedAt: new Date(discussion.updatedAt),
    text: [discussion.title, discussion.body, ...thread].filter(Boolean).join('\n\n'),
    fields: { number: discussion.number, category: discussion.category?.name ?? null, author: discussion.author?.login ?? null, comments: discussion.comments.totalCount },
    webUrl: discussion.url,
    access: scope.access,
  };
}

/**
 * The discussions updated after `state.discussions`. The listing runs newest first, so the new mark
 * (its first item) is known at once but only stands once the listing reaches the old one; until
 * then `discussions_pending` says where a stopped run continues. `checkpoint` is called after each
 * page. Returns whether the token may read them (null: it may not, with GraphQL's reason).
 */
export async function* readDiscussions(api: GitHubApi, scope: RepositoryScope, state: RepositoryState, checkpoint: () => void): AsyncGenerator<SourceEntity, string | null> {
  const { owner, name } = scope.repository;
  let after = state.discussions_pending?.after ?? null;
  // advance() keeps the newest time: in this newest-first listing the first item sets it, and
  // later ones join it only when updated in the same second.
  let top = state.discussions_pending?.top ?? state.discussions;
  for (;;) {
    const { data, errors } = await api.graphql(DISCUSSIONS_QUERY, { owner: owner.login, name, first: PAGE_SIZE, after }, answerSchema);
    const connection = data?.repository?.discussions;
    if (!connection) return errors[0]?.message ?? 'the repository is not visible to GraphQL';
    let reachedMark = false;
    for (const discussion of connection.nodes) {
      if (!isAfter(state.discussions, discussion.id, discussion.updatedAt)) {
        reachedMark = true;
        break;
      }
      top = advance(top, discussion.id, discussion.updatedAt);
      yield discussionEntity(scope, discussion);
    }
    if (reachedMark || !connection.pageInfo.hasNextPage || !connection.pageInfo.endCursor) break;
    after = connection.pageInfo.endCursor;
    if (top) state.discussions_pending = { after, top };
    checkpoint();
  }
  state.discussions = top;
  state.discussions_pending = null;
  checkpoint();
  return null;
}
