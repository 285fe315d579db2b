import { z } from 'zod';
import type { SourceEntity, SourceItem, SourceRun, SyncContext } from '../connector.js';
import { commentEntity, documentEntity, entityId, issueEntity, projectEntity, teamEntity } from './entities.js';
import { LinearGraphql } from './graphql.js';
import { ISSUE_COMMENT_IDS, issueCommentIdsAnswer, ORGANIZATION, organizationAnswer, STREAM_NAMES, STREAMS, type Stream, type StreamName } from './queries.js';

/**
 * A run reads five streams in turn — teams, projects, documents, issues, comments — each a Relay
 * connection ordered by `updatedAt`. Incremental runs ask each stream only for what changed after
 * the latest `updatedAt` the previous run saw in it (`filter: { updatedAt: { gt } }`), archived nodes
 * included: an archived or trashed node is a deletion, and an archived issue takes its comments
 * along. After every page the run checkpoints its stream and page cursor, so a failed run resumes
 * at the next page.
 *
 * What this cannot see: a comment deleted outright (Linear does not archive those) stays until the
 * next full sync.
 */

export interface LinearConfig {
  api_url: string;
  include_comments: boolean;
  include_documents: boolean;
  page_size: number;
}

/** The latest `updatedAt` seen in each stream (null: nothing seen yet, the stream is read whole). */
const watermarks = z.strictObject({
  teams: z.string().nullable(),
  projects: z.string().nullable(),
  documents: z.string().nullable(),
  issues: z.string().nullable(),
  comments: z.string().nullable(),
});
type Watermarks = z.infer<typeof watermarks>;

export const linearCursor = z.strictObject({
  version: z.literal(1),
  /** The API and workspace read: a cursor of another one (the API URL or the account changed) says nothing here. */
  api_url: z.string(),
  workspace: z.string(),
  /** The lists read: with comments or documents newly left out, only a complete listing removes them. */
  streams: z.array(z.enum(STREAM_NAMES)),
  /** Where each stream starts: the watermarks of the previous finished run. */
  since: watermarks,
  /** On a checkpoint: the stream being read, the page cursor to continue after, and what was seen so far. */
  resume: z.strictObject({ stream: z.enum(STREAM_NAMES), after: z.string().nullable(), seen: watermarks }).nullable(),
});
export type LinearCursor = z.infer<typeof linearCursor>;

type LinearContext = SyncContext<LinearConfig, unknown, LinearCursor>;
interface SyncedNode {
  id: string;
  updatedAt: string;
  archivedAt: string | null;
  trashed?: boolean | null;
}

const noWatermarks = (): Watermarks => ({ teams: null, projects: null, documents: null, issues: null, comments: null });
const later = (a: string | null, b: string) => (a === null || Date.parse(b) > Date.parse(a) ? b : a);
const gone = (node: SyncedNode) => node.archivedAt !== null || node.trashed === true;
const idOf: Record<StreamName, (id: string) => string> = { teams: entityId.team, projects: entityId.project, documents: entityId.document, issues: entityId.issue, comments: entityId.comment };

export function graphqlClient(context: Pick<LinearContext, 'config' | 'http' | 'tokens' | 'signal'>): LinearGraphql {
  return new LinearGraphql({ http: context.http, endpoint: `${context.config.api_url}/graphql`, tokens: context.tokens, signal: context.signal });
}

export function runSync(context: LinearContext): SourceRun<LinearCursor> {
  const { config, logger } = context;
  const streams: StreamName[] = STREAM_NAMES.filter((name) => (name !== 'comments' || config.include_comments) && (name !== 'documents' || config.include_documents));
  const usable = context.cursor?.api_url === config.api_url && context.cursor.streams.join() === streams.join() ? context.cursor : null;
  let next: LinearCursor | null = null;
  async function* items(): AsyncGenerator<SourceItem> {
    const graphql = graphqlClient(context);
    const { organization } = await graphql.query(ORGANIZATION, {}, organizationAnswer);
    // Another account on the same API reads another workspace: everything is read again (what the other
    // workspace left stays until a full sync, which `force_full_sync` starts).
    if (usable && usable.workspace !== organization.id) logger.warn({ source: 'linear' }, 'linear: the stored cursor is of another workspace; reading everything');
    const cursor = usable?.workspace === organization.id ? usable : null;
    const since = cursor?.since ?? noWatermarks();
    const seen: Watermarks = { ...(cursor?.resume?.seen ?? since) };
    const saved = (resume: LinearCursor['resume'], watermarks: Watermarks): LinearCursor => ({ version: 1, api_url: config.api_url, workspace: organization.id, streams, since: watermarks, resume });
    const run: StreamRun = { context, graphql, since, seen, save: (stream, after) => context.checkpoint(saved({ stream, after, seen: { ...seen } }, since)) };
    const resume = cursor?.resume ?? null;
    const from = (name: StreamName) => (resume?.stream === name ? resume.after : null);
    const start = resume ? Math.max(streams.indexOf(resume.stream), 0) : 0;

    for (const name of streams.slice(start)) {
      switch (name) {
        case 'teams':
          yield* readStream(run, STREAMS.teams, from(name), (team) => teamEntity(team, organization.urlKey));
          break;
        case 'projects':
          yield* readStream(run, STREAMS.projects, from(name), projectEntity);
          break;
        case 'documents':
          yield* readStream(run, STREAMS.documents, from(name), documentEntity);
          break;
        case 'issues':
          yield* readStream(run, STREAMS.issues, from(name), issueEntity);
          break;
        case 'comments':
          yield* readStream(run, STREAMS.comments, from(name), (comment) => {
            // Comments on archived issues go with their issue (whose deletion took them along).
            if (!comment.issue || comment.issue.archivedAt !== null) return null;
            return commentEntity({ ...comment, issue: comment.issue });
          });
          break;
      }
    }
    next = saved(null, seen);
  }
  return {
    // Only a run from nothing lists everything; resumed and incremental runs report their deletions.
    complete: usable === null,
    nextCursor: () => next,
    items: items(),
  };
}

interface StreamRun {
  context: LinearContext;
  graphql: LinearGraphql;
  since: Watermarks;
  /** Updated as nodes are read: the next run's `since`. */
  seen: Watermarks;
  save(stream: StreamName, after: string | null): void;
}

/** One stream, page by page from `after`: entities, deletions of what left, a checkpoint after each page. */
async function* readStream<Node extends SyncedNode>(run: StreamRun, stream: Stream<Node>, after: string | null, entityOf: (node: Node) => SourceEntity | null): AsyncGenerator<SourceItem> {
  const { context, graphql, since, seen } = run;
  const { config, signal, logger } = context;
  const name = stream.name;
  const incremental = since[name] !== null;
  let pages = 0;
  for (;;) {
    signal.throwIfAborted();
    const variables = {
      first: config.page_size,
      after,
      // Archived nodes only matter as deletions, which a full listing sees by their absence.
      includeArchived: incremental,
      filter: { ...(incremental ? { updatedAt: { gt: since[name] } } : {}), ...(name === 'comments' ? { issue: { null: false } } : {}) },
    };
    const page = (await graphql.query(stream.document, variables, stream.answer))[name];
    if (!page) throw new Error(`Linear's answer has no ${name}`);
    for (const node of page.nodes) {
      seen[name] = later(seen[name], node.updatedAt);
      if (gone(node)) {
        if (!incremental) continue;
        yield { delete: idOf[name](node.id) };
        if (name === 'issues' && config.include_comments) yield* commentDeletions(graphql, node.id, config.page_size);
        continue;
      }
      const entity = entityOf(node);
      if (entity) yield entity;
      else context.reportSkipped?.({ entityId: idOf[name](node.id), reason: 'on an archived issue' });
    }
    pages += 1;
    after = page.pageInfo.endCursor;
    run.save(name, after);
    if (!page.pageInfo.hasNextPage || !after) break;
  }
  logger.debug({ source: 'linear', stream: name, pages, incremental }, 'linear: stream read');
}

/** Deletions for every comment of an issue that left (archived ones included: they were indexed too). */
async function* commentDeletions(graphql: LinearGraphql, issueId: string, pageSize: number): AsyncGenerator<SourceItem> {
  let after: string | null = null;
  do {
    const answer: z.infer<typeof issueCommentIdsAnswer> = await graphql.query(ISSUE_COMMENT_IDS, { id: issueId, first: pageSize, after }, issueCommentIdsAnswer);
    for (const comment of answer.issue.comments.nodes) yield { delete: entityId.comment(comment.id) };
    after = answer.issue.comments.pageInfo.hasNextPage ? answer.issue.comments.pageInfo.endCursor : null;
  } while (after);
}
