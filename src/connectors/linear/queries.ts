import { z } from 'zod';

/**
 * The GraphQL documents the connector sends and the shapes of their answers, after Linear's schema
 * (github.com/linear/linear, packages/sdk/src/schema.graphql: Query.teams/projects/documents/issues/
 * comments, Issue.comments, Organization, and the node types' fields used here). Every list is a Relay
 * connection (`first`/`after`, `pageInfo { hasNextPage endCursor }`) ordered by `updatedAt`; page sizes
 * stay modest because nested connections multiply a query's complexity.
 */

const named = z.object({ name: z.string() });
const teamRef = z.object({ id: z.string(), name: z.string(), key: z.string() });
const projectRef = z.object({ id: z.string(), name: z.string() });
const pageInfo = z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() });
const connection = <Node>(node: z.ZodType<Node>) => z.object({ nodes: z.array(node), pageInfo });

/** Fields every synced node has: `archivedAt`/`trashed` say it left (a deletion, on incremental runs). */
const lifecycle = { id: z.string(), createdAt: z.string(), updatedAt: z.string(), archivedAt: z.string().nullable() };

export const teamNode = z.object({ ...lifecycle, name: z.string(), key: z.string(), description: z.string().nullable() });
export const projectNode = z.object({
  ...lifecycle,
  trashed: z.boolean().nullable(),
  name: z.string(),
  description: z.string(),
  content: z.string().nullable(),
  url: z.string(),
  status: named.nullable(),
  lead: named.nullable(),
  startDate: z.string().nullable(),
  targetDate: z.string().nullable(),
  teams: z.object({ nodes: z.array(teamRef) }),
});
export const issueNode = z.object({
  ...lifecycle,
  trashed: z.boolean().nullable(),
  identifier: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  url: z.string(),
  priority: z.number(),
  priorityLabel: z.string(),
  dueDate: z.string().nullable(),
  estimate: z.number().nullable(),
  state: z.object({ name: z.string(), type: z.string() }),
  assignee: named.nullable(),
  creator: named.nullable(),
  team: teamRef,
  project: projectRef.nullable(),
  labels: z.object({ nodes: z.array(named) }),
});
export const commentNode = z.object({
  ...lifecycle,
  body: z.string(),
  url: z.string(),
  user: named.nullable(),
  issue: z.object({ id: z.string(), identifier: z.string(), title: z.string(), archivedAt: z.string().nullable(), team: teamRef, project: projectRef.nullable() }).nullable(),
});
export const documentNode = z.object({
  ...lifecycle,
  trashed: z.boolean().nullable(),
  title: z.string(),
  content: z.string().nullable(),
  url: z.string(),
  creator: named.nullable(),
  team: teamRef.nullable(),
  project: projectRef.extend({ teams: z.object({ nodes: z.array(teamRef) }) }).nullable(),
});

export type TeamNode = z.infer<typeof teamNode>;
export type ProjectNode = z.infer<typeof projectNode>;
export type IssueNode = z.infer<typeof issueNode>;
export type CommentNode = z.infer<typeof commentNode>;
export type DocumentNode = z.infer<typeof documentNode>;
export type Page<Node> = { nodes: Node[]; pageInfo: z.infer<typeof pageInfo> };

const TEAM = 'id name key description createdAt updatedAt archivedAt';
const TEAM_REF = 'id name key';
const PROJECT = `id name description content url createdAt updatedAt archivedAt trashed status { name } lead { name } startDate targetDate teams(first: 1) { nodes { ${TEAM_REF} } }`;
const ISSUE = `id identifier title description url priority priorityLabel dueDate estimate createdAt updatedAt archivedAt trashed state { name type } assignee { name } creator { name } team { ${TEAM_REF} } project { id name } labels(first: 20) { nodes { name } }`;
const COMMENT = `id body url createdAt updatedAt archivedAt user { name } issue { id identifier title archivedAt team { ${TEAM_REF} } project { id name } }`;
const DOCUMENT = `id title content url createdAt updatedAt archivedAt trashed creator { name } team { ${TEAM_REF} } project { id name teams(first: 1) { nodes { ${TEAM_REF} } } }`;

/** One stream of the sync: a top-level connection, its filter type and node shape. */
export interface Stream<Node> {
  name: StreamName;
  document: string;
  /** The answer's `data`: the connection under the stream's name. */
  answer: z.ZodType<Record<string, Page<Node>>>;
}

export const STREAM_NAMES = ['teams', 'projects', 'documents', 'issues', 'comments'] as const;
export type StreamName = (typeof STREAM_NAMES)[number];

function stream<Node>(name: StreamName, filterType: string, fields: string, node: z.ZodType<Node>): Stream<Node> {
  const document = `query Catchment_${name}($first: Int!, $after: String, $filter: ${filterType}, $includeArchived: Boolean) {
  ${name}(first: $first, after: $after, filter: $filter, includeArchived: $includeArchived, orderBy: updatedAt) { nodes { ${fields} } pageInfo { hasNextPage endCursor } }
}`;
  return { name, document, answer: z.record(z.string(), connection(node)) };
}

export const STREAMS = {
  teams: stream('teams', 'TeamFilter', TEAM, teamNode),
  projects: stream('projects', 'ProjectFilter', PROJECT, projectNode),
  documents: stream('documents', 'DocumentFilter', DOCUMENT, documentNode),
  issues: stream('issues', 'IssueFilter', ISSUE, issueNode),
  comments: stream('comments', 'CommentFilter', COMMENT, commentNode),
};

/** The workspace: its name, and the URL key its web addresses start with (teams have no `url` field). */
export const ORGANIZATION = 'query Catchment_organization { organization { id name urlKey } }';
export const organizationAnswer = z.object({ organization: z.object({ id: z.string(), name: z.string(), urlKey: z.string() }) });

/** The comments of an issue that left, archived ones included, to delete them with it. */
export const ISSUE_COMMENT_IDS = `query Catchment_issueComments($id: String!, $first: Int!, $after: String) {
  issue(id: $id) { comments(first: $first, after: $after, includeArchived: true) { nodes { id } pageInfo { hasNextPage endCursor } } }
}`;
export const issueCommentIdsAnswer = z.object({ issue: z.object({ comments: connection(z.object({ id: z.string() })) }) });
