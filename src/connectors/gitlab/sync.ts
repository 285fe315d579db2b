import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { SourceItem, SourceRun, SyncContext } from '../connector.js';
import { SourceResponseTooLargeError } from '../contract/http-client.js';
import { EXTRACTION_VERSION, extractText, isSupported } from '../text-extraction/extract-text.js';
import { GitLabApi, gitlabIssuable, gitlabNote, gitlabProject, gitlabTreeEntry, gitlabWikiPage, projectRef, type GitLabIssuable, type GitLabProject, type IssuableKind } from './api.js';
import { emptyProjectState, webRoot, type GitLabConfig, type GitLabCredentials, type GitLabCursor, type IssuableCollection, type ProjectState } from './config.js';
import { fileEntity, fileId, issuableEntity, issuableId, noteEntity, noteId, projectEntity, projectId, wikiPageId, wikiPageEntity } from './entities.js';

/**
 * A gitlab run. Per project, in order: the project, its issues and merge requests (each with its
 * comments), its wiki pages, its files at the default branch.
 *
 * Incremental: issues and merge requests are listed by `updated_after` the greatest `updated_at` of
 * the previous run (ordered by `updated_at`, so that mark only moves forward); one whose `updated_at`
 * is unchanged is kept with its comments. A new or edited comment touches its issue's `updated_at`,
 * so comments are read again with the issues that changed. Deleted issues do not show in such a
 * listing: the run compares the project's count (`x-total`) with what it knows and, when they differ
 * (or GitLab gives no count), lists every iid once to find which went. Wiki pages are listed with
 * their content and kept when their hash is unchanged; files are kept when their blob SHA is.
 *
 * A listing by update time is paged by offset: an issue updated while the run pages through moves
 * to the end, and the one after it may slide onto a page already read. The run does not see it then;
 * a later update does bring it back (GitLab 18.3's keyset paging of issues would avoid this).
 *
 * Checkpoints: after each page of issues or merge requests, each wiki, every tenth page of the
 * tree, and when a project is done. A resumed run skips the projects done and continues the current one
 * from its state; it is not `complete`, so what it knows to be gone it deletes explicitly (every run
 * does, so both kinds of run agree).
 */

type Context = SyncContext<GitLabConfig, GitLabCredentials, GitLabCursor>;
type Query = Record<string, string | number | boolean | undefined>;

const PER_PAGE = 100;
const TREE_PAGES_PER_CHECKPOINT = 10;
const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** What was read and how: a cursor saved under other settings is not continued (a full sync instead). */
const settingsOf = (config: GitLabConfig) =>
  hash([webRoot(config), config.include_issues, config.include_merge_requests, config.include_notes, config.include_wiki, config.include_files, config.max_file_bytes, EXTRACTION_VERSION]);

/** A project feature is on unless its access level says `disabled` or its older boolean says false. */
function featureOn(project: GitLabProject, feature: 'issues' | 'merge_requests' | 'wiki' | 'repository'): boolean {
  const [level, enabled] = {
    issues: [project.issues_access_level, project.issues_enabled],
    merge_requests: [project.merge_requests_access_level, project.merge_requests_enabled],
    wiki: [project.wiki_access_level, project.wiki_enabled],
    repository: [project.repository_access_level, null],
  }[feature];
  return level !== 'disabled' && enabled !== false;
}

/** The projects the config names (by path or id, each once), or every project the token is a member of. */
export async function resolveProjects(api: GitLabApi, config: GitLabConfig): Promise<GitLabProject[]> {
  if (config.projects.length > 0) {
    const byId = new Map<number, GitLabProject>();
    for (const reference of config.projects) {
      const project = await api.project(reference);
      byId.set(project.id, project);
    }
    return [...byId.values()];
  }
  const projects: GitLabProject[] = [];
  for await (const page of api.pages('/projects', gitlabProject, { membership: true, pagination: 'keyset', order_by: 'id', sort: 'asc', per_page: PER_PAGE })) projects.push(...page.items);
  return projects;
}

export function runSync(context: Context): SourceRun<GitLabCursor> {
  const { config, cursor, resuming, http, checkpoint } = context;
  const settings = settingsOf(config);
  const previous = cursor && cursor.settings === settings ? cursor : null;
  const resumedFrom = resuming && previous?.done ? new Set(previous.done) : null;
  const projects: Record<string, ProjectState> = structuredClone(previous?.projects ?? {});
  const done = [...(resumedFrom ?? [])];
  let finished = false;
  const save = () => checkpoint(structuredClone({ version: 1 as const, settings, projects, done }));

  async function* items(): AsyncGenerator<SourceItem> {
    const api = new GitLabApi(http, config);
    const current = await resolveProjects(api, config);
    const currentIds = new Set(current.map((project) => String(project.id)));
    for (const [id, state] of Object.entries(projects)) {
      if (currentIds.has(id)) continue;
      yield* deletionsOfProject(Number(id), state);
      delete projects[id];
    }
    for (const project of current) {
      if (resumedFrom?.has(project.id)) continue;
      projects[project.id] ??= emptyProjectState();
      yield* new ProjectRun(api, context, project, projects[project.id]!, save).run();
      done.push(project.id);
      save();
    }
    finished = true;
  }

  return { complete: !resumedFrom, items: items(), nextCursor: () => (finished ? { version: 1, settings, projects } : null) };
}

function* deletionsOfIssuables(kind: IssuableKind, project: number, collection: IssuableCollection, iids: string[] = Object.keys(collection.items)): Generator<SourceItem> {
  for (const iid of iids) {
    for (const note of collection.items[iid]?.notes ?? []) yield { delete: noteId(project, note) };
    yield { delete: issuableId(kind, project, iid) };
    delete collection.items[iid];
  }
}

function* deletionsOfProject(project: number, state: ProjectState): Generator<SourceItem> {
  yield* deletionsOfIssuables('issues', project, state.issues);
  yield* deletionsOfIssuables('merge_requests', project, state.merge_requests);
  for (const slug of Object.keys(state.wiki)) yield { delete: wikiPageId(project, slug) };
  for (const path of Object.keys(state.files)) yield { delete: fileId(project, path) };
  yield { delete: projectId(project) };
}

class ProjectRun {
  private readonly base: string;

  constructor(
    private readonly api: GitLabApi,
    private readonly context: Context,
    private readonly project: GitLabProject,
    private readonly state: ProjectState,
    private readonly save: () => void,
  ) {
    this.base = `/projects/${projectRef(project.id)}`;
  }

  async *run(): AsyncGenerator<SourceItem> {
    const { config } = this.context;
    yield projectEntity(this.project);
    for (const kind of ['issues', 'merge_requests'] as const) {
      const included = kind === 'issues' ? config.include_issues : config.include_merge_requests;
      if (included && featureOn(this.project, kind)) yield* this.issuables(kind);
      else yield* deletionsOfIssuables(kind, this.project.id, this.state[kind]);
    }
    if (config.include_wiki && featureOn(this.project, 'wiki')) yield* this.wiki();
    else yield* this.wikiGone(new Set());
    const branch = this.project.default_branch;
    if (config.include_files && branch && !this.project.empty_repo && featureOn(this.project, 'repository')) yield* this.files(branch);
    else yield* this.filesGone(new Set());
  }

  private *keepIssuable(kind: IssuableKind, iid: string): Generator<SourceItem> {
    yield { keep: issuableId(kind, this.project.id, iid) };
    for (const note of this.state[kind].items[iid]!.notes) yield { keep: noteId(this.project.id, note) };
  }

  private async *issuables(kind: IssuableKind): AsyncGenerator<SourceItem> {
    const collection = this.state[kind];
    const incremental = collection.since !== null;
    const listed = new Set<string>();
    const query: Query = { updated_after: collection.since ?? undefined, order_by: 'updated_at', sort: 'asc', per_page: PER_PAGE };
    for await (const page of this.api.pages(`${this.base}/${kind}`, gitlabIssuable, query)) {
      for (const issuable of page.items) {
        const iid = String(issuable.iid);
        listed.add(iid);
        if (collection.items[iid]?.updated_at === issuable.updated_at) {
          yield* this.keepIssuable(kind, iid);
          continue;
        }
        yield* this.issuable(kind, issuable);
        if (collection.since === null || Date.parse(issuable.updated_at) > Date.parse(collection.since)) collection.since = issuable.updated_at;
      }
      this.save();
    }
    if (incremental) yield* this.issuablesGone(kind);
    for (const iid of Object.keys(collection.items)) if (!listed.has(iid)) yield* this.keepIssuable(kind, iid);
  }

  /** An issue or merge request that is new or changed, and its comments (system notes left out). */
  private async *issuable(kind: IssuableKind, issuable: GitLabIssuable): AsyncGenerator<SourceItem> {
    yield issuableEntity(kind, this.project, issuable);
    const notes: number[] = [];
    if (this.context.config.include_notes) {
      for await (const page of this.api.pages(`${this.base}/${kind}/${issuable.iid}/notes`, gitlabNote, { sort: 'asc', order_by: 'created_at', per_page: PER_PAGE })) {
        for (const note of page.items) {
          if (note.system) continue;
          notes.push(note.id);
          yield noteEntity(kind, this.project, issuable, note);
        }
      }
    }
    const iid = String(issuable.iid);
    for (const before of this.state[kind].items[iid]?.notes ?? []) if (!notes.includes(before)) yield { delete: noteId(this.project.id, before) };
    this.state[kind].items[iid] = { updated_at: issuable.updated_at, notes };
  }

  /**
   * Issues or merge requests deleted since the last run. `x-total` of a one-item page is the project's
   * count; when it matches what is known nothing went, else (or without a count) every iid is listed.
   */
  private async *issuablesGone(kind: IssuableKind): AsyncGenerator<SourceItem> {
    const collection = this.state[kind];
    const { response } = await this.api.get(`${this.base}/${kind}`, z.array(gitlabIssuable), { query: { per_page: 1 } });
    const total = response.headers.get('x-total');
    if (total !== null && /^\d+$/.test(total) && Number(total) === Object.keys(collection.items).length) return;
    const present = new Set<string>();
    for await (const page of this.api.pages(`${this.base}/${kind}`, gitlabIssuable, { order_by: 'created_at', sort: 'asc', per_page: PER_PAGE })) {
      for (const issuable of page.items) present.add(String(issuable.iid));
    }
    yield* deletionsOfIssuables(
      kind,
      this.project.id,
      collection,
      Object.keys(collection.items).filter((iid) => !present.has(iid)),
    );
    this.save();
  }

  private async *wiki(): AsyncGenerator<SourceItem> {
    // Every page comes at once, with its content: unchanged pages (same hash) are kept.
    const { value: pages } = await this.api.get(`${this.base}/wikis`, z.array(gitlabWikiPage), { query: { with_content: 1 }, acceptStatuses: [403, 404] });
    const listed = new Set<string>();
    for (const page of pages ?? []) {
      listed.add(page.slug);
      const digest = hash([page.title, page.format, page.content]);
      if (this.state.wiki[page.slug] === digest) {
        yield { keep: wikiPageId(this.project.id, page.slug) };
        continue;
      }
      yield wikiPageEntity(this.project, page);
      this.state.wiki[page.slug] = digest;
    }
    yield* this.wikiGone(listed);
    this.save();
  }

  private *wikiGone(listed: Set<string>): Generator<SourceItem> {
    for (const slug of Object.keys(this.state.wiki)) {
      if (listed.has(slug)) continue;
      yield { delete: wikiPageId(this.project.id, slug) };
      delete this.state.wiki[slug];
    }
  }

  private async *files(branch: string): AsyncGenerator<SourceItem> {
    const listed = new Set<string>();
    const tree = this.api.pages(`${this.base}/repository/tree`, gitlabTreeEntry, { ref: branch, recursive: true, pagination: 'keyset', per_page: PER_PAGE }, { emptyOn: [404] });
    let pages = 0;
    for await (const page of tree) {
      for (const entry of page.items) {
        // Regular files only: no folders, symbolic links (120000) or submodules (commits).
        if (entry.type !== 'blob' || (entry.mode !== '100644' && entry.mode !== '100755')) continue;
        listed.add(entry.path);
        yield* this.file(branch, entry.path, entry.id);
      }
      // A checkpoint copies the whole state: every tenth page of a large tree is often enough (the rest is re-listed and kept by SHA).
      if (++pages % TREE_PAGES_PER_CHECKPOINT === 0) this.save();
    }
    yield* this.filesGone(listed);
  }

  private async *file(branch: string, path: string, sha: string): AsyncGenerator<SourceItem> {
    const entityId = fileId(this.project.id, path);
    const name = path.split('/').at(-1)!;
    const skip = (reason: string, detail?: string) => {
      this.state.unindexed[path] = { sha, reason };
      this.context.reportSkipped?.({ entityId, reason, ...(detail ? { detail } : {}) });
    };
    if (!isSupported(name)) {
      this.context.reportSkipped?.({ entityId, reason: 'unsupported file type' });
      return;
    }
    if (this.state.files[path] === sha) {
      yield { keep: entityId };
      return;
    }
    const before = this.state.unindexed[path];
    if (before?.sha === sha) {
      this.context.reportSkipped?.({ entityId, reason: before.reason });
      return;
    }
    const limit = this.context.config.max_file_bytes;
    // The tree gives no sizes: the download stops at the limit.
    const bytes = await this.context.http.getBytes(`${this.api.root}${this.base}/repository/blobs/${sha}/raw`, { maxBytes: limit }).then(
      (answer) => answer.bytes,
      (error: unknown) => {
        if (error instanceof SourceResponseTooLargeError) return null;
        throw error;
      },
    );
    if (!bytes) return skip('larger than max_file_bytes', `more than ${limit} bytes`);
    const extracted = await extractText({ name, bytes }).catch(() => null);
    if (!extracted?.text.trim()) return skip('binary content or no text');
    delete this.state.unindexed[path];
    this.state.files[path] = sha;
    yield fileEntity(this.project, branch, { path, sha, bytes, text: extracted.text, mimeType: extracted.mimeType, ...(extracted.language ? { language: extracted.language } : {}) });
  }

  private *filesGone(listed: Set<string>): Generator<SourceItem> {
    for (const path of Object.keys(this.state.files)) {
      if (listed.has(path)) continue;
      yield { delete: fileId(this.project.id, path) };
      delete this.state.files[path];
    }
    for (const path of Object.keys(this.state.unindexed)) if (!listed.has(path)) delete this.state.unindexed[path];
  }
}
