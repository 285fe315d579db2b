/**
 * Test helper: what the fake GitLab (./test-gitlab-server.ts) holds, and the JSON it answers for it —
 * the project, issue / merge request and note objects of doc/api/projects.md, issues.md,
 * merge_requests.md and notes.md (gitlabhq/gitlabhq), with the fields the connector reads and a few
 * beside them.
 */

export interface GitLabUser {
  id: number;
  username: string;
  name: string;
}

export interface FakeNote {
  id: number;
  body: string;
  system: boolean;
  author: GitLabUser;
  created_at: string;
  updated_at: string;
}

export interface FakeIssuable {
  id: number;
  iid: number;
  title: string;
  description: string;
  state: string;
  labels: string[];
  confidential?: boolean;
  created_at: string;
  updated_at: string;
  notes: FakeNote[];
}

export interface FakeWikiPage {
  slug: string;
  title: string;
  content: string;
  format: string;
}

export interface FakeProject {
  id: number;
  name: string;
  path: string;
  namespace: { id: number; name: string; path: string; kind: string; full_path: string };
  description: string;
  visibility: 'private' | 'internal' | 'public';
  default_branch: string | null;
  created_at: string;
  /** Listed by `membership=true`; a project the user is no member of is still readable when public. */
  member: boolean;
  wiki_enabled: boolean;
  issues: Map<number, FakeIssuable>;
  mergeRequests: Map<number, FakeIssuable>;
  wiki: Map<string, FakeWikiPage>;
  /** Path → content at the default branch. */
  files: Map<string, Buffer>;
}

const webUrlOf = (web: string, project: FakeProject) => `${web}/${project.namespace.full_path}/${project.path}`;

/** `web`: the instance's web root (the fake's URL). */
export function projectJson(web: string, project: FakeProject) {
  return {
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: `${project.namespace.name} / ${project.name}`,
    path: project.path,
    path_with_namespace: `${project.namespace.full_path}/${project.path}`,
    created_at: project.created_at,
    default_branch: project.default_branch,
    visibility: project.visibility,
    web_url: webUrlOf(web, project),
    namespace: { ...project.namespace, web_url: `${web}/groups/${project.namespace.full_path}` },
    last_activity_at: project.created_at,
    empty_repo: project.files.size === 0,
    archived: false,
    issues_enabled: true,
    merge_requests_enabled: true,
    wiki_enabled: project.wiki_enabled,
    topics: [],
  };
}

export function issuableJson(web: string, project: FakeProject, kind: 'issues' | 'merge_requests', issuable: FakeIssuable, author: GitLabUser) {
  const path = `${project.namespace.full_path}/${project.path}`;
  const sigil = kind === 'issues' ? '#' : '!';
  return {
    id: issuable.id,
    iid: issuable.iid,
    project_id: project.id,
    title: issuable.title,
    description: issuable.description,
    state: issuable.state,
    created_at: issuable.created_at,
    updated_at: issuable.updated_at,
    closed_at: issuable.state === 'closed' ? issuable.updated_at : null,
    labels: issuable.labels,
    milestone: null,
    author: { ...author, state: 'active', web_url: `${web}/${author.username}` },
    assignees: [],
    user_notes_count: issuable.notes.filter((note) => !note.system).length,
    web_url: `${webUrlOf(web, project)}/-/${kind}/${issuable.iid}`,
    references: { short: `${sigil}${issuable.iid}`, full: `${path}${sigil}${issuable.iid}` },
    ...(kind === 'issues'
      ? { confidential: issuable.confidential ?? false, type: 'ISSUE' }
      : { source_branch: `feature-${issuable.iid}`, target_branch: project.default_branch, draft: false, merged_at: issuable.state === 'merged' ? issuable.updated_at : null }),
  };
}

export function noteJson(project: FakeProject, issuable: FakeIssuable, noteableType: 'Issue' | 'MergeRequest', note: FakeNote) {
  return {
    id: note.id,
    type: null,
    body: note.body,
    author: { ...note.author, state: 'active' },
    created_at: note.created_at,
    updated_at: note.updated_at,
    system: note.system,
    noteable_id: issuable.id,
    noteable_type: noteableType,
    noteable_iid: issuable.iid,
    project_id: project.id,
    resolvable: false,
    confidential: false,
    internal: false,
  };
}
