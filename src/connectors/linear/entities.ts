import type { Breadcrumb, SourceEntity } from '../connector.js';
import type { CommentNode, DocumentNode, IssueNode, ProjectNode, TeamNode } from './queries.js';

/**
 * Linear's nodes as entities. Ids are `<type>:<Linear id>` (Linear ids are UUIDs shared by no two
 * nodes, the prefix keeps the type readable in filters). Breadcrumbs follow the app: team → project →
 * issue; `web_url` is the node's own `url` (teams have none: their page is built from the workspace's
 * URL key, as the app addresses it).
 */

export const entityId = {
  team: (id: string) => `team:${id}`,
  project: (id: string) => `project:${id}`,
  issue: (id: string) => `issue:${id}`,
  comment: (id: string) => `comment:${id}`,
  document: (id: string) => `document:${id}`,
};

const date = (value: string | null) => (value ? new Date(value) : null);
const teamCrumb = (team: { id: string; name: string }): Breadcrumb => ({ entityId: entityId.team(team.id), name: team.name, entityType: 'team' });
const projectCrumb = (project: { id: string; name: string }): Breadcrumb => ({ entityId: entityId.project(project.id), name: project.name, entityType: 'project' });
/** Lines of "Name: value" for the facts an agent asks about, leaving out the empty ones. */
const facts = (entries: [string, string | number | null | undefined][]) =>
  entries.flatMap(([name, value]) => (value === null || value === undefined || value === '' ? [] : [`${name}: ${value}`])).join('\n');
const sections = (...parts: (string | null | undefined)[]) => parts.filter((part) => part && part.trim() !== '').join('\n\n');

/** Where the app shows a team: https://linear.app/<workspace URL key>/team/<team key>. */
export const teamWebUrl = (urlKey: string, teamKey: string) => `https://linear.app/${encodeURIComponent(urlKey)}/team/${encodeURIComponent(teamKey)}`;

export function teamEntity(team: TeamNode, urlKey: string): SourceEntity {
  return {
    entityId: entityId.team(team.id),
    entityType: 'team',
    name: team.name,
    breadcrumbs: [],
    createdAt: date(team.createdAt),
    updatedAt: date(team.updatedAt),
    text: sections(`# ${team.name} (${team.key})`, team.description),
    fields: { id: team.id, key: team.key },
    webUrl: teamWebUrl(urlKey, team.key),
  };
}

export function projectEntity(project: ProjectNode): SourceEntity {
  const team = project.teams.nodes[0];
  return {
    entityId: entityId.project(project.id),
    entityType: 'project',
    name: project.name,
    breadcrumbs: team ? [teamCrumb(team)] : [],
    createdAt: date(project.createdAt),
    updatedAt: date(project.updatedAt),
    text: sections(
      `# ${project.name}`,
      facts([
        ['Status', project.status?.name],
        ['Lead', project.lead?.name],
        ['Start date', project.startDate],
        ['Target date', project.targetDate],
      ]),
      project.description,
      project.content,
    ),
    fields: { id: project.id, status: project.status?.name ?? null, lead: project.lead?.name ?? null, start_date: project.startDate, target_date: project.targetDate, team_key: team?.key ?? null },
    webUrl: project.url,
  };
}

export function issueEntity(issue: IssueNode): SourceEntity {
  const labels = issue.labels.nodes.map((label) => label.name);
  return {
    entityId: entityId.issue(issue.id),
    entityType: 'issue',
    name: `${issue.identifier} ${issue.title}`,
    breadcrumbs: [teamCrumb(issue.team), ...(issue.project ? [projectCrumb(issue.project)] : [])],
    createdAt: date(issue.createdAt),
    updatedAt: date(issue.updatedAt),
    text: sections(
      `# ${issue.identifier}: ${issue.title}`,
      facts([
        ['State', issue.state.name],
        ['Priority', issue.priorityLabel],
        ['Assignee', issue.assignee?.name],
        ['Creator', issue.creator?.name],
        ['Labels', labels.join(', ')],
        ['Project', issue.project?.name],
        ['Due date', issue.dueDate],
        ['Estimate', issue.estimate],
      ]),
      issue.description,
    ),
    fields: {
      id: issue.id,
      identifier: issue.identifier,
      state: issue.state.name,
      state_type: issue.state.type,
      priority: issue.priority,
      priority_label: issue.priorityLabel,
      assignee: issue.assignee?.name ?? null,
      creator: issue.creator?.name ?? null,
      labels,
      team_key: issue.team.key,
      project: issue.project?.name ?? null,
      due_date: issue.dueDate,
      estimate: issue.estimate,
    },
    webUrl: issue.url,
  };
}

/** A comment on an issue (the connector only asks for those): under the issue's team, project and issue. */
export function commentEntity(comment: CommentNode & { issue: NonNullable<CommentNode['issue']> }): SourceEntity {
  const { issue } = comment;
  return {
    entityId: entityId.comment(comment.id),
    entityType: 'comment',
    name: `Comment on ${issue.identifier}${comment.user ? ` by ${comment.user.name}` : ''}`,
    breadcrumbs: [teamCrumb(issue.team), ...(issue.project ? [projectCrumb(issue.project)] : []), { entityId: entityId.issue(issue.id), name: `${issue.identifier} ${issue.title}`, entityType: 'issue' }],
    createdAt: date(comment.createdAt),
    updatedAt: date(comment.updatedAt),
    text: sections(`Comment${comment.user ? ` by ${comment.user.name}` : ''} on ${issue.identifier}: ${issue.title}`, comment.body),
    fields: { id: comment.id, author: comment.user?.name ?? null, issue_identifier: issue.identifier },
    webUrl: comment.url,
  };
}

export function documentEntity(document: DocumentNode): SourceEntity {
  const team = document.project?.teams.nodes[0] ?? document.team;
  return {
    entityId: entityId.document(document.id),
    entityType: 'document',
    name: document.title,
    breadcrumbs: [...(team ? [teamCrumb(team)] : []), ...(document.project ? [projectCrumb(document.project)] : [])],
    createdAt: date(document.createdAt),
    updatedAt: date(document.updatedAt),
    text: sections(`# ${document.title}`, document.content),
    fields: { id: document.id, creator: document.creator?.name ?? null, project: document.project?.name ?? null },
    webUrl: document.url,
  };
}
