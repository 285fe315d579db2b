import type { Breadcrumb, SourceEntity, SourceItem, SourceRun, SyncContext } from '../connector.js';
import { SourceHttpError } from '../contract/errors.js';
import { type Block, type Database, NotionApi, type Parent, type SearchResult } from './notion-api.js';
import { type BlockNode, databaseTitle, pageTitle, propertyLines, propertyText, renderBlocks, richText, schemaLines } from './render.js';
import { ENTITY_TYPES, type NotionConfig, type NotionCursor, type NotionToken, type TrackedObject } from './schemas.js';

/**
 * One Notion run. It lists what the integration sees with `POST /v1/search` (newest edit first),
 * then reads what changed, oldest edit first, saving a checkpoint after each object: a checkpoint is
 * an ordinary cursor whose `edited_since` is the last object read, so a resumed run is an
 * incremental run from there.
 *
 * - full (no cursor, or `force_full_sync`): everything is listed and read; the run is complete.
 * - listing (every `full_listing_every_hours`): everything is listed, each database's rows too
 *   (`POST /v1/databases/{id}/query`, as search's index may lag), and only objects whose
 *   `last_edited_time` changed are read; the others are keep markers. Complete, so what is no longer
 *   listed (deleted, or no longer shared) is removed.
 * - incremental: the listing stops at the cursor's `edited_since`; objects found archived or in the
 *   trash, or answering 404, are deleted. Not complete.
 */
type NotionContext = SyncContext<NotionConfig, NotionToken, NotionCursor>;
type Mode = 'full' | 'listing' | 'incremental';

/** Notion's search index lags behind edits: the next incremental listing reaches this far before the newest edit seen. */
const SEARCH_LAG_MS = 10 * 60_000;
/** Parent chains are short; a longer one is cut rather than followed forever. */
const MAX_DEPTH = 32;
/** Blocks whose children are other entities (child pages, databases) or read elsewhere. */
const CHILDREN_NOT_READ = new Set(['child_page', 'child_database']);

const isTrashed = (object: { archived: boolean; in_trash: boolean }) => object.archived || object.in_trash;
const entityTypeOf = (object: SearchResult) => (object.object === 'database' ? ENTITY_TYPES.database : object.parent.type === 'database_id' ? ENTITY_TYPES.row : ENTITY_TYPES.page);
const titleOfObject = (object: SearchResult) => (object.object === 'database' ? databaseTitle(object) : pageTitle(object));
const byEditThenId = (a: SearchResult, b: SearchResult) => a.last_edited_time.localeCompare(b.last_edited_time) || a.id.localeCompare(b.id);

function modeOf(context: NotionContext, previous: NotionCursor | null, now: Date): Mode {
  if (!previous) return 'full';
  if (context.resuming) return 'incremental';
  const due = previous.listed_at === null || now.getTime() - Date.parse(previous.listed_at) >= context.config.full_listing_every_hours * 3_600_000;
  return due ? 'listing' : 'incremental';
}

export function notionRun(context: NotionContext): SourceRun<NotionCursor> {
  const apiUrl = context.config.api_url;
  const previous = context.cursor && context.cursor.api_url === apiUrl ? context.cursor : null;
  const startedAt = new Date();
  const mode = modeOf(context, previous, startedAt);
  let next: NotionCursor | null = null;
  const items = async function* (): AsyncGenerator<SourceItem> {
    const api = new NotionApi(context.http, apiUrl);
    const tree = new PageTree(api, previous?.objects ?? {}, (await api.workspaceName()) || 'Notion workspace');
    const listed = await list(api, mode, previous);
    const objects: Record<string, TrackedObject> = mode === 'full' ? {} : { ...previous!.objects };
    const unchanged: SearchResult[] = [];
    const changed: SearchResult[] = [];
    const trashed: string[] = [];
    for (const object of listed.values()) {
      tree.learn(object);
      if (isTrashed(object)) trashed.push(object.id);
      else if (mode !== 'full' && objects[object.id]?.edited === object.last_edited_time) unchanged.push(object);
      else changed.push(object);
    }
    context.expectTotal?.(unchanged.length + changed.length);
    for (const id of trashed) {
      delete objects[id];
      yield { delete: id };
    }
    for (const object of unchanged) yield { keep: object.id };
    const cursorAt = (editedSince: string | null): NotionCursor => ({ version: 1, api_url: apiUrl, edited_since: editedSince, listed_at: previous?.listed_at ?? null, objects: { ...objects } });
    for (const object of changed.sort(byEditThenId)) {
      const entity = await readObject(api, tree, object, context);
      if (entity === 'gone') {
        delete objects[object.id];
        yield { delete: object.id };
      } else if (entity) {
        objects[object.id] = { edited: object.last_edited_time, type: entityTypeOf(object), title: titleOfObject(object), parent: await tree.parentOf(object) };
        yield entity;
      }
      context.checkpoint(cursorAt(object.last_edited_time));
    }
    if (mode !== 'incremental') {
      for (const id of Object.keys(objects)) if (!listed.has(id)) delete objects[id];
    }
    next = { ...cursorAt(nextEditedSince(listed, previous)), listed_at: mode === 'incremental' ? (previous?.listed_at ?? null) : startedAt.toISOString() };
  };
  return { complete: mode !== 'incremental', nextCursor: () => next, items: items() };
}

/** Where the next incremental listing stops: shortly before the newest edit seen (never earlier than this run's own bound). */
function nextEditedSince(listed: Map<string, SearchResult>, previous: NotionCursor | null): string | null {
  let latest = previous?.edited_since ? Date.parse(previous.edited_since) : Number.NEGATIVE_INFINITY;
  for (const object of listed.values()) latest = Math.max(latest, Date.parse(object.last_edited_time) - SEARCH_LAG_MS);
  return Number.isFinite(latest) ? new Date(latest).toISOString() : null;
}

/** The objects to consider, by id (a database's rows may come from both search and the query). */
async function list(api: NotionApi, mode: Mode, previous: NotionCursor | null): Promise<Map<string, SearchResult>> {
  const listed = new Map<string, SearchResult>();
  const since = mode === 'incremental' && previous?.edited_since ? Date.parse(previous.edited_since) : null;
  for await (const object of api.search()) {
    // Sorted newest first: the rest was edited before the previous run listed it.
    if (since !== null && Date.parse(object.last_edited_time) < since) break;
    listed.set(object.id, object);
  }
  if (mode !== 'incremental') {
    const databases = [...listed.values()].filter((object): object is Database => object.object === 'database' && !isTrashed(object));
    for (const database of databases) {
      for await (const row of api.queryDatabase(database.id)) if (!listed.has(row.id)) listed.set(row.id, row);
    }
  }
  return listed;
}

/** Reads one object into its entity; 'gone' when Notion no longer has it, null when it is left out (reported). */
async function readObject(api: NotionApi, tree: PageTree, object: SearchResult, context: NotionContext): Promise<SourceEntity | 'gone' | null> {
  const breadcrumbs = await tree.breadcrumbs(object);
  const common = {
    entityId: object.id,
    breadcrumbs,
    createdAt: new Date(object.created_time),
    updatedAt: new Date(object.last_edited_time),
    webUrl: object.url,
  };
  if (object.object === 'database') {
    const name = databaseTitle(object) || 'Untitled database';
    const description = richText(object.description).trim();
    return {
      ...common,
      entityType: ENTITY_TYPES.database,
      name,
      text: [`# ${name}`, description, `Properties:\n${schemaLines(object).join('\n')}`].filter(Boolean).join('\n\n'),
      fields: { notion_id: object.id, parent_type: object.parent.type, is_inline: object.is_inline, properties: Object.fromEntries(Object.values(object.properties).map((property) => [property.name, property.type])) },
    };
  }
  let blocks: BlockNode[] | null;
  try {
    blocks = await readBlocks(api, object.id, 0);
  } catch (error) {
    // 403 restricted_resource: the integration lacks the capability to read this content.
    if (error instanceof SourceHttpError && error.status === 403) {
      context.reportSkipped?.({ entityId: object.id, reason: 'restricted by Notion', detail: error.bodyExcerpt });
      return null;
    }
    throw error;
  }
  if (blocks === null) return 'gone';
  const name = pageTitle(object) || 'Untitled';
  const body = renderBlocks(blocks);
  const titleOf = (id: string) => tree.titleOf(id);
  if (object.parent.type === 'database_id') {
    const lines = propertyLines(object, titleOf);
    return {
      ...common,
      entityType: ENTITY_TYPES.row,
      name,
      text: [`# ${name}`, lines.join('\n'), body].filter(Boolean).join('\n\n'),
      fields: {
        notion_id: object.id,
        database_id: object.parent.database_id,
        properties: Object.fromEntries(Object.entries(object.properties).map(([key, property]) => [key, propertyText(property, titleOf)])),
      },
    };
  }
  return { ...common, entityType: ENTITY_TYPES.page, name, text: [`# ${name}`, body].filter(Boolean).join('\n\n'), fields: { notion_id: object.id, parent_type: object.parent.type } };
}

/** A page's (or block's) content tree; null when Notion answers 404 for the page itself. */
async function readBlocks(api: NotionApi, blockId: string, depth: number): Promise<BlockNode[] | null> {
  const blocks = await api.blockChildren(blockId);
  if (blocks === null) return null;
  const nodes: BlockNode[] = [];
  for (const block of blocks) {
    const children = block.has_children && !CHILDREN_NOT_READ.has(block.type) && depth < MAX_DEPTH ? ((await readBlocks(api, childrenSource(block), depth + 1)) ?? []) : [];
    nodes.push({ block, children });
  }
  return nodes;
}

/** A synced block that copies another one holds no children of its own: the original's are read. */
function childrenSource(block: Block): string {
  if (block.type !== 'synced_block') return block.id;
  const syncedFrom = (block.synced_block as { synced_from?: { block_id?: string } | null } | undefined)?.synced_from;
  return syncedFrom?.block_id ?? block.id;
}

interface TreeNode {
  title: string;
  type: TrackedObject['type'];
  parent: string | null;
}

/**
 * The page tree, for breadcrumbs: what this run listed, what the cursor remembers, and parents
 * retrieved one by one (`GET /v1/pages|databases|blocks/{id}`) when neither knows them. A parent the
 * integration cannot see (404) ends the chain, under the workspace.
 */
class PageTree {
  private readonly listed = new Map<string, SearchResult>();
  private readonly retrieved = new Map<string, TreeNode | null>();
  /** Block id → the page or database it sits in. */
  private readonly blockParents = new Map<string, string | null>();

  constructor(
    private readonly api: NotionApi,
    private readonly remembered: Record<string, TrackedObject>,
    private readonly workspaceName: string,
  ) {}

  learn(object: SearchResult): void {
    this.listed.set(object.id, object);
  }

  titleOf(id: string): string | null {
    const listed = this.listed.get(id);
    return listed ? titleOfObject(listed) : (this.remembered[id]?.title ?? this.retrieved.get(id)?.title ?? null);
  }

  async parentOf(object: SearchResult): Promise<string | null> {
    return this.resolveParent(object.parent, 0);
  }

  async breadcrumbs(object: SearchResult): Promise<Breadcrumb[]> {
    const chain: Breadcrumb[] = [];
    const visited = new Set([object.id]);
    let id = await this.parentOf(object);
    while (id && !visited.has(id) && chain.length < MAX_DEPTH) {
      visited.add(id);
      const node = await this.node(id);
      if (!node) break;
      chain.unshift({ entityId: id, name: node.title || 'Untitled', entityType: node.type });
      id = node.parent;
    }
    return [{ entityId: 'workspace', name: this.workspaceName, entityType: 'notion_workspace' }, ...chain];
  }

  private async node(id: string): Promise<TreeNode | null> {
    const listed = this.listed.get(id);
    if (listed) return { title: titleOfObject(listed), type: entityTypeOf(listed), parent: await this.parentOf(listed) };
    const remembered = this.remembered[id];
    if (remembered) return remembered;
    if (!this.retrieved.has(id)) this.retrieved.set(id, await this.retrieveNode(id));
    return this.retrieved.get(id)!;
  }

  /** A parent outside the listing: a page first (most parents are), then a database. */
  private async retrieveNode(id: string): Promise<TreeNode | null> {
    const object = (await this.api.retrieve('pages', id)) ?? (await this.api.retrieve('databases', id));
    if (!object || isTrashed(object)) return null;
    return { title: titleOfObject(object), type: entityTypeOf(object), parent: await this.parentOf(object) };
  }

  private async resolveParent(parent: Parent, hops: number): Promise<string | null> {
    if (parent.type === 'page_id') return parent.page_id ?? null;
    if (parent.type === 'database_id') return parent.database_id ?? null;
    if (parent.type !== 'block_id' || !parent.block_id || hops >= MAX_DEPTH) return null;
    const blockId = parent.block_id;
    if (!this.blockParents.has(blockId)) {
      const block = await this.api.retrieve('blocks', blockId);
      this.blockParents.set(blockId, block?.parent ? await this.resolveParent(block.parent, hops + 1) : null);
    }
    return this.blockParents.get(blockId)!;
  }
}
