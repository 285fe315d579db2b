/**
 * Test helper: the part of Linear's GraphQL schema the fake server (./test-linear-server.ts) serves,
 * written after the published schema (github.com/linear/linear, packages/sdk/src/schema.graphql):
 * the same type, field, argument and input names and nullability, for the fields the connector reads.
 * Queries are validated against it, so a field or argument Linear does not have fails as it would there.
 */
export const LINEAR_SCHEMA_SUBSET = /* GraphQL */ `
scalar DateTime
scalar TimelessDate
scalar DateTimeOrDuration

enum PaginationOrderBy { createdAt updatedAt }

type PageInfo { startCursor: String endCursor: String hasPreviousPage: Boolean! hasNextPage: Boolean! }

input DateComparator { eq: DateTimeOrDuration neq: DateTimeOrDuration gt: DateTimeOrDuration gte: DateTimeOrDuration lt: DateTimeOrDuration lte: DateTimeOrDuration }
input NullableIssueFilter { null: Boolean updatedAt: DateComparator }
input TeamFilter { updatedAt: DateComparator }
input ProjectFilter { updatedAt: DateComparator }
input DocumentFilter { updatedAt: DateComparator }
input IssueFilter { updatedAt: DateComparator }
input CommentFilter { updatedAt: DateComparator issue: NullableIssueFilter }

type Organization { id: ID! name: String! urlKey: String! }
type User { id: ID! name: String! displayName: String! }
type WorkflowState { id: ID! name: String! type: String! }
type ProjectStatus { id: ID! name: String! }
type IssueLabel { id: ID! name: String! }

type Team {
  id: ID! name: String! key: String! description: String
  createdAt: DateTime! updatedAt: DateTime! archivedAt: DateTime
}
type Project {
  id: ID! name: String! description: String! content: String url: String!
  createdAt: DateTime! updatedAt: DateTime! archivedAt: DateTime trashed: Boolean
  status: ProjectStatus! lead: User startDate: TimelessDate targetDate: TimelessDate
  teams(after: String, before: String, filter: TeamFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): TeamConnection!
}
type Issue {
  id: ID! identifier: String! title: String! description: String url: String!
  priority: Float! priorityLabel: String! dueDate: TimelessDate estimate: Float
  createdAt: DateTime! updatedAt: DateTime! archivedAt: DateTime trashed: Boolean
  state: WorkflowState! assignee: User creator: User team: Team! project: Project
  labels(after: String, before: String, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueLabelConnection!
  comments(after: String, before: String, filter: CommentFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): CommentConnection!
}
type Comment {
  id: ID! body: String! url: String!
  createdAt: DateTime! updatedAt: DateTime! archivedAt: DateTime
  user: User issue: Issue issueId: String
}
type Document {
  id: ID! title: String! content: String url: String!
  createdAt: DateTime! updatedAt: DateTime! archivedAt: DateTime trashed: Boolean
  creator: User team: Team project: Project
}

type TeamConnection { nodes: [Team!]! pageInfo: PageInfo! }
type ProjectConnection { nodes: [Project!]! pageInfo: PageInfo! }
type IssueConnection { nodes: [Issue!]! pageInfo: PageInfo! }
type CommentConnection { nodes: [Comment!]! pageInfo: PageInfo! }
type DocumentConnection { nodes: [Document!]! pageInfo: PageInfo! }
type IssueLabelConnection { nodes: [IssueLabel!]! pageInfo: PageInfo! }

type Query {
  organization: Organization!
  issue(id: String!): Issue!
  teams(after: String, before: String, filter: TeamFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): TeamConnection!
  projects(after: String, before: String, filter: ProjectFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): ProjectConnection!
  documents(after: String, before: String, filter: DocumentFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): DocumentConnection!
  issues(after: String, before: String, filter: IssueFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueConnection!
  comments(after: String, before: String, filter: CommentFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): CommentConnection!
}
`;
