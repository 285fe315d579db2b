import type { Breadcrumb, SourceEntity } from '../connector.js';
import type { GitLabIssuable, GitLabNote, GitLabProject, GitLabWikiPage, IssuableKind } from './api.js';

/**
 * GitLab objects as entities. Ids are stable across renames (numeric project ids, iids, slugs, paths);
 * breadcrumbs mirror GitLab's hierarchy: namespace → project → issue or merge request (for comments).
 */

export const projectId = (project: number) => `project:${project}`;
export const issuableId = (kind: IssuableKind, project: number, iid: number | string) => `${kind === 'issues' ? 'issue' : 'merge_request'}:${project}:${iid}`;
export const noteId = (project: number, note: number) => `note:${project}:${note}`;
export const wikiPageId = (project: number, slug: string) => `wiki_page:${project}:${slug}`;
export const fileId = (project: number, path: string) => `file:${project}:${path}`;

const date = (value: string | null | undefined) => (value ? new Date(value) : null);

/** A public project's items are public, except confidential issues and internal notes; who else can see them GitLab does not list here. */
const accessOf = (project: GitLabProject, hidden = false) => ({ viewers: null, isPublic: project.visibility === 'public' && !hidden });

export function projectCrumbs(project: GitLabProject): Breadcrumb[] {
  return [
    { entityId: `namespace:${project.namespace.id}`, name: project.namespace.full_path, entityType: 'namespace' },
    { entityId: projectId(project.id), name: project.name, entityType: 'project' },
  ];
}

export function projectEntity(project: GitLabProject): SourceEntity {
  return {
    entityId: projectId(project.id),
    entityType: 'project',
    name: project.name_with_namespace ?? project.path_with_namespace,
    breadcrumbs: projectCrumbs(project).slice(0, 1),
    createdAt: date(project.created_at),
    updatedAt: date(project.last_activity_at),
    text: [`# ${project.path_with_namespace}`, project.description ?? '', project.topics?.length ? `Topics: ${project.topics.join(', ')}` : ''].filter(Boolean).join('\n\n'),
    fields: {
      id: project.id,
      path_with_namespace: project.path_with_namespace,
      default_branch: project.default_branch ?? null,
      visibility: project.visibility ?? null,
      archived: project.archived ?? false,
      topics: project.topics ?? [],
    },
    webUrl: project.web_url,
    access: accessOf(project),
  };
}

export function issuableEntity(kind: IssuableKind, project: GitLabProject, issuable: GitLabIssuable): SourceEntity {
  const reference = issuable.references?.full ?? `${project.path_with_namespace}${kind === 'issues' ? '#' : '!'}${issuable.iid}`;
  const people = (issuable.assignees ?? []).map((assignee) => `@${assignee.username}`);
  return {
    entityId: issuableId(kind, project.id, issuable.iid),
    entityType: kind === 'issues' ? 'issue' : 'merge_request',
    name: `${reference} ${issuable.title}`,
    breadcrumbs: projectCrumbs(project),
    createdAt: date(issuable.created_at),
    updatedAt: date(issuable.updated_at),
    text: [
      `# ${issuable.title}`,
      [`State: ${issuable.state}`, issuable.labels.length ? `Labels: ${issuable.labels.join(', ')}` : '', people.length ? `Assignees: ${people.join(', ')}` : '', issuable.source_branch ? `Branches: ${issuable.source_branch} → ${issuable.target_branch ?? ''}` : '']
        .filter(Boolean)
        .join('\n'),
      issuable.description ?? '',
    ]
      .filter(Boolean)
      .join('\n\n'),
    fields: {
      iid: issuable.iid,
      reference,
      state: issuable.state,
      labels: issuable.labels,
      author: issuable.author?.username ?? null,
      assignees: (issuable.assignees ?? []).map((assignee) => assignee.username),
      milestone: issuable.milestone?.title ?? null,
      closed_at: issuable.closed_at ?? null,
      ...(kind === 'issues'
        ? { confidential: issuable.confidential ?? false }
        : { source_branch: issuable.source_branch ?? null, target_branch: issuable.target_branch ?? null, draft: issuable.draft ?? false, merged_at: issuable.merged_at ?? null }),
    },
    webUrl: issuable.web_url,
    access: accessOf(project, issuable.confidential === true),
  };
}

export function noteEntity(kind: IssuableKind, project: GitLabProject, issuable: GitLabIssuable, note: GitLabNote): SourceEntity {
  const author = note.author?.username ?? 'unknown';
  return {
    entityId: noteId(project.id, note.id),
    entityType: 'note',
    name: `Comment by @${author} on ${issuable.references?.full ?? `${kind === 'issues' ? '#' : '!'}${issuable.iid}`}`,
    breadcrumbs: [...projectCrumbs(project), { entityId: issuableId(kind, project.id, issuable.iid), name: issuable.title, entityType: kind === 'issues' ? 'issue' : 'merge_request' }],
    createdAt: date(note.created_at),
    updatedAt: date(note.updated_at ?? note.created_at),
    text: note.body,
    fields: { id: note.id, author, noteable_type: kind === 'issues' ? 'Issue' : 'MergeRequest', noteable_iid: issuable.iid, internal: note.internal ?? false },
    // GitLab shows each comment at this anchor of its issue's or merge request's page.
    webUrl: `${issuable.web_url}#note_${note.id}`,
    access: accessOf(project, issuable.confidential === true || note.internal === true),
  };
}

export function wikiPageEntity(project: GitLabProject, page: GitLabWikiPage): SourceEntity {
  return {
    entityId: wikiPageId(project.id, page.slug),
    entityType: 'wiki_page',
    name: page.title,
    breadcrumbs: projectCrumbs(project),
    createdAt: null,
    updatedAt: null,
    text: `# ${page.title}\n\n${page.content}`,
    fields: { slug: page.slug, format: page.format ?? null },
    webUrl: `${project.web_url}/-/wikis/${page.slug.split('/').map(encodeURIComponent).join('/')}`,
    access: accessOf(project),
  };
}

export function fileEntity(
  project: GitLabProject,
  branch: string,
  file: { path: string; sha: string; bytes: Buffer; text: string; mimeType: string; language?: string },
): SourceEntity {
  const name = file.path.split('/').at(-1)!;
  return {
    entityId: fileId(project.id, file.path),
    entityType: 'file',
    name,
    breadcrumbs: projectCrumbs(project),
    createdAt: null,
    updatedAt: null,
    text: file.text,
    fields: { path: file.path, blob_sha: file.sha, size: file.bytes.length, mime_type: file.mimeType, branch },
    webUrl: `${project.web_url}/-/blob/${encodeURIComponent(branch)}/${file.path.split('/').map(encodeURIComponent).join('/')}`,
    file: { name, mimeType: file.mimeType, size: file.bytes.length, bytes: file.bytes },
    ...(file.language ? { language: file.language } : {}),
    access: accessOf(project),
  };
}
