import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type FakeBlock, type Parent, text } from './test-notion-content.js';
import { TestNotionOAuth } from './test-notion-oauth.js';
import { closeLoopback, listenOnLoopback, recordedRequest, type RecordedRequest } from '../../platform/http/test-loopback-server.js';

/**
 * Test helper: a local HTTP server speaking Notion's REST API (version 2022-06-28) as its reference
 * documents it (developers.notion.com/reference; object shapes as typed in makenotion/notion-sdk-js
 * src/api-endpoints.ts):
 * - `Authorization: Bearer <token>` on every request, else 401 `unauthorized`; `Notion-Version` required,
 *   else 400 `missing_version` — /reference/authentication, /reference/versioning
 * - errors as `{"object":"error","status","code","message","request_id"}` with the documented codes
 *   (unauthorized 401, object_not_found 404, validation_error 400, rate_limited 429 with `Retry-After`
 *   in seconds, service_unavailable 503) — /reference/status-codes, /reference/request-limits
 * - pagination by `start_cursor` / `page_size` (at most 100) answering `{"object":"list","results",
 *   "next_cursor","has_more","type",…}` — /reference/intro#pagination
 * - `POST /v1/search` (`sort` by last_edited_time, `filter` by object; archived and trashed objects left
 *   out) — /reference/post-search; `GET /v1/blocks/{id}/children` — /reference/get-block-children;
 *   `POST /v1/databases/{id}/query` — /reference/post-database-query; `GET /v1/pages/{id}`,
 *   `/v1/databases/{id}`, `/v1/blocks/{id}` — /reference/retrieve-a-page, -database, -block;
 *   `GET /v1/users/me` (the bot, with `bot.workspace_name`) — /reference/get-self
 * - `POST /v1/oauth/token`: see test-notion-oauth.ts
 * Sub-pages and databases also appear as `child_page` / `child_database` blocks of their parent, with
 * the same id, as in Notion. Edit times advance one hour per change and are whole minutes (Notion rounds them).
 */

interface StoredBlock {
  id: string;
  type: string;
  content: Record<string, unknown>;
  parent: Parent;
  children: string[];
  created: string;
  edited: string;
}

interface StoredObject {
  object: 'page' | 'database';
  id: string;
  parent: Parent;
  created: string;
  edited: string;
  archived: boolean;
  in_trash: boolean;
  /** Pages: property values; databases: the properties schema. */
  properties: Record<string, Record<string, unknown>>;
  /** Databases only. */
  title?: unknown[];
  description?: unknown[];
  /** Top-level block ids (pages). */
  children: string[];
}

export interface NotionRequest extends RecordedRequest {
  body: Record<string, unknown> | null;
  status: number;
}


const START = Date.UTC(2025, 0, 6, 9, 0);
const HOUR = 3_600_000;
const MAX_PAGE_SIZE = 100;

class NotionError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const notFound = (id: string) => new NotionError(404, 'object_not_found', `Could not find block with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`);
const undashed = (id: string) => id.replace(/-/g, '');

export class TestNotionServer {
  /** Tokens the API accepts (internal integration tokens and OAuth access tokens alike). */
  readonly tokens = new Set<string>();
  readonly requests: NotionRequest[] = [];
  /** 429 rate_limited answers (with Retry-After, in seconds) given instead of the next API request to `path` (any path when absent). */
  readonly rateLimits: { path?: string; retryAfter: string }[] = [];
  /**
   * Trashed objects search still returns (with `in_trash: true`), as Notion's search index lags
   * behind edits for a while.
   */
  readonly searchIndexLag = new Set<string>();
  /** Paths answering 503 service_unavailable (as Notion does while unavailable) until removed. */
  readonly unavailable = new Set<string>();
  workspaceName = 'Acme';
  /** Most results a list page holds, whatever `page_size` asks (Notion may return fewer than asked). */
  pageSize = MAX_PAGE_SIZE;
  /** The token endpoint; its access tokens are valid at the API. */
  readonly oauth = new TestNotionOAuth(
    () => this.workspaceName,
    (accessToken) => this.tokens.add(accessToken),
  );
  private readonly objects = new Map<string, StoredObject>();
  private readonly blocks = new Map<string, StoredBlock>();
  private clock = START;
  private nextId = 1;
  private server: Server | null = null;
  url = '';

  /** The next edit time: one hour after the previous, whole minutes. */
  private tick(): string {
    this.clock += HOUR;
    return new Date(this.clock).toISOString();
  }

  private newId(): string {
    return `00000000-0000-4000-8000-${String(this.nextId++).padStart(12, '0')}`;
  }

  addPage({ title, parent = { type: 'workspace', workspace: true }, content = [], properties }: { title: string; parent?: Parent; content?: FakeBlock[]; properties?: Record<string, Record<string, unknown>> }): string {
    const id = this.newId();
    const edited = this.tick();
    const titleKey = parent.type === 'database_id' ? this.titlePropertyOf(parent.database_id) : 'title';
    this.objects.set(id, {
      object: 'page',
      id,
      parent,
      created: edited,
      edited,
      archived: false,
      in_trash: false,
      properties: { ...properties, [titleKey]: { id: 'title', type: 'title', title: [text(title)] } },
      children: this.storeBlocks(content, { type: 'page_id', page_id: id }, edited),
    });
    if (parent.type !== 'database_id') this.attachChild(parent, { id, type: 'child_page', content: { title }, parent, children: [], created: edited, edited });
    return id;
  }

  addDatabase({ title, parent, properties, description = '' }: { title: string; parent: Parent; properties: Record<string, Record<string, unknown>>; description?: string }): string {
    const id = this.newId();
    const edited = this.tick();
    const schema = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, { id: name.slice(0, 4).toLowerCase(), name, ...property }]));
    this.objects.set(id, { object: 'database', id, parent, created: edited, edited, archived: false, in_trash: false, properties: schema, title: [text(title)], description: description ? [text(description)] : [], children: [] });
    this.attachChild(parent, { id, type: 'child_database', content: { title }, parent, children: [], created: edited, edited });
    return id;
  }

  /** Changes a page's title, properties and/or content (replacing it), as one edit. */
  editPage(id: string, { title, content, properties }: { title?: string; content?: FakeBlock[]; properties?: Record<string, Record<string, unknown>> }): void {
    const page = this.objects.get(id)!;
    page.edited = this.tick();
    if (properties) Object.assign(page.properties, properties);
    if (title !== undefined) {
      const key = Object.entries(page.properties).find(([, property]) => property.type === 'title')![0];
      page.properties[key] = { id: 'title', type: 'title', title: [text(title)] };
    }
    if (content) {
      // The sub-page and sub-database blocks stay: they are other objects.
      const kept = page.children.filter((child) => ['child_page', 'child_database'].includes(this.blocks.get(child)?.type ?? ''));
      page.children = [...this.storeBlocks(content, { type: 'page_id', page_id: id }, page.edited), ...kept];
    }
  }

  /** Moves a page or database to the trash (`in_trash` and `archived` true): search and queries leave it out. */
  trash(id: string): void {
    const object = this.objects.get(id)!;
    object.edited = this.tick();
    object.archived = true;
    object.in_trash = true;
  }

  /** The integration loses access to an object (unshared, or deleted for good): 404 from now on. */
  unshare(id: string): void {
    this.objects.delete(id);
  }

  /** The ids of a page's top-level blocks of a type (e.g. its column list, to put a page in a column). */
  blockIdsOf(pageId: string, type: string): string[] {
    return this.objects.get(pageId)!.children.filter((id) => this.blocks.get(id)!.type === type);
  }

  childBlockIds(blockId: string): string[] {
    return [...this.blocks.get(blockId)!.children];
  }

  webUrlOf(id: string): string {
    return `https://www.notion.so/${undashed(id)}`;
  }

  private titlePropertyOf(databaseId: string): string {
    const database = this.objects.get(databaseId)!;
    return Object.entries(database.properties).find(([, property]) => property.type === 'title')?.[0] ?? 'Name';
  }

  private storeBlocks(content: FakeBlock[], parent: Parent, edited: string): string[] {
    return content.map((block) => {
      const id = block.id ?? this.newId();
      const stored: StoredBlock = { id, type: block.type, content: block.content, parent, children: [], created: edited, edited };
      this.blocks.set(id, stored);
      stored.children = this.storeBlocks(block.children ?? [], { type: 'block_id', block_id: id }, edited);
      return id;
    });
  }

  private attachChild(parent: Parent, block: StoredBlock): void {
    this.blocks.set(block.id, block);
    if (parent.type === 'page_id') this.objects.get(parent.page_id)!.children.push(block.id);
    if (parent.type === 'block_id') this.blocks.get(parent.block_id)!.children.push(block.id);
  }

  /** The fields Notion's page and database objects have in common. */
  private sharedObjectJson(object: StoredObject) {
    return {
      object: object.object,
      id: object.id,
      created_time: object.created,
      last_edited_time: object.edited,
      created_by: { object: 'user', id: 'user-1' },
      last_edited_by: { object: 'user', id: 'user-1' },
      cover: null,
      icon: null,
      parent: object.parent,
      archived: object.archived,
      in_trash: object.in_trash,
      properties: object.properties,
      url: this.webUrlOf(object.id),
      public_url: null,
    };
  }

  private pageJson(page: StoredObject) {
    return this.sharedObjectJson(page);
  }

  private databaseJson(database: StoredObject) {
    return {
      ...this.sharedObjectJson(database),
      title: database.title,
      description: database.description,
      is_inline: database.parent.type !== 'workspace',
    };
  }

  private objectJson(object: StoredObject) {
    return object.object === 'page' ? this.pageJson(object) : this.databaseJson(object);
  }

  private blockJson(block: StoredBlock) {
    const hasChildren = block.type === 'child_page' || block.type === 'child_database' ? this.hasChildObjects(block.id) : block.children.length > 0;
    return {
      object: 'block',
      id: block.id,
      parent: block.parent,
      created_time: block.created,
      last_edited_time: block.edited,
      created_by: { object: 'user', id: 'user-1' },
      last_edited_by: { object: 'user', id: 'user-1' },
      has_children: hasChildren,
      archived: false,
      in_trash: false,
      type: block.type,
      [block.type]: block.content,
    };
  }

  private hasChildObjects(id: string): boolean {
    const object = this.objects.get(id);
    return !!object && (object.children.length > 0 || [...this.objects.values()].some((other) => other.parent.type === 'database_id' && other.parent.database_id === id));
  }

  /** One page of a list, cursor = the id of the first result of the next page. */
  private listPage<T extends { id: string }>(items: T[], body: { start_cursor?: unknown; page_size?: unknown }, type: string, toJson: (item: T) => unknown) {
    const size = body.page_size === undefined ? MAX_PAGE_SIZE : Number(body.page_size);
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) throw new NotionError(400, 'validation_error', `body failed validation: body.page_size should be ≤ \`100\`, instead was \`${String(body.page_size)}\`.`);
    let start = 0;
    if (body.start_cursor !== undefined && body.start_cursor !== null) {
      start = items.findIndex((item) => item.id === body.start_cursor);
      if (start < 0) throw new NotionError(400, 'validation_error', 'The start_cursor provided is invalid.');
    }
    const results = items.slice(start, start + Math.min(size, this.pageSize));
    const next = items[start + results.length];
    return { object: 'list', results: results.map(toJson), next_cursor: next ? next.id : null, has_more: !!next, type, [type]: {}, request_id: randomUUID() };
  }

  private visible(object: StoredObject): boolean {
    return !object.archived && !object.in_trash;
  }

  private route(method: string, path: string, query: URLSearchParams, body: Record<string, unknown>): unknown {
    let match: RegExpMatchArray | null;
    if (method === 'GET' && path === '/v1/users/me') {
      return { object: 'user', id: 'bot-1', name: 'Catchment', avatar_url: null, type: 'bot', bot: { owner: { type: 'workspace', workspace: true }, workspace_name: this.workspaceName } };
    }
    if (method === 'POST' && path === '/v1/search') {
      const filter = body.filter as { property?: string; value?: string } | undefined;
      const sort = body.sort as { direction?: string; timestamp?: string } | undefined;
      if (sort && sort.timestamp !== 'last_edited_time') throw new NotionError(400, 'validation_error', 'body failed validation: body.sort.timestamp should be `"last_edited_time"`.');
      const direction = sort?.direction === 'ascending' ? 1 : -1;
      const found = [...this.objects.values()]
        .filter((object) => (this.visible(object) || this.searchIndexLag.has(object.id)) && (!filter || object.object === filter.value))
        .sort((a, b) => direction * (a.edited.localeCompare(b.edited) || a.id.localeCompare(b.id)));
      return this.listPage(found, body, 'page_or_database', (object) => this.objectJson(object));
    }
    if (method === 'POST' && (match = path.match(/^\/v1\/databases\/([^/]+)\/query$/))) {
      const database = this.objects.get(match[1]!);
      if (!database || database.object !== 'database') throw notFound(match[1]!);
      const rows = [...this.objects.values()].filter((object) => object.parent.type === 'database_id' && object.parent.database_id === database.id && this.visible(object));
      return this.listPage(rows, body, 'page_or_database', (row) => this.pageJson(row));
    }
    if (method === 'GET' && (match = path.match(/^\/v1\/blocks\/([^/]+)\/children$/))) {
      const id = match[1]!;
      const owner = this.objects.get(id);
      const block = this.blocks.get(id);
      if (owner?.object === 'page') {
        if (!this.visible(owner)) throw notFound(id);
      } else if (!block) {
        throw notFound(id);
      }
      const children = (owner?.object === 'page' ? owner.children : block!.children).map((child) => this.blocks.get(child)!);
      return this.listPage(children, { start_cursor: query.get('start_cursor') ?? undefined, page_size: query.get('page_size') ?? undefined }, 'block', (child) => this.blockJson(child));
    }
    if (method === 'GET' && (match = path.match(/^\/v1\/(pages|databases|blocks)\/([^/]+)$/))) {
      const [, kind, id] = match as unknown as [string, string, string];
      if (kind === 'blocks') {
        const block = this.blocks.get(id);
        if (!block) throw notFound(id);
        return this.blockJson(block);
      }
      const object = this.objects.get(id);
      if (!object || object.object !== (kind === 'pages' ? 'page' : 'database')) throw notFound(id);
      return this.objectJson(object);
    }
    throw new NotionError(400, 'invalid_request_url', 'Invalid request URL.');
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const method = request.method ?? 'GET';
    const record: NotionRequest = { ...recordedRequest(request), body: null, status: 0 };
    this.requests.push(record);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify(body));
    };
    try {
      if (raw && !String(request.headers['content-type']).startsWith('application/json')) throw new NotionError(400, 'invalid_json', 'Error parsing JSON body.');
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        throw new NotionError(400, 'invalid_json', 'Error parsing JSON body.');
      }
      record.body = raw ? body : null;
      if (method === 'POST' && url.pathname === '/v1/oauth/token') {
        const answer = this.oauth.answer(request.headers.authorization, body);
        return send(answer.status, answer.body);
      }
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
      if (!bearer || !this.tokens.has(bearer[1]!)) throw new NotionError(401, 'unauthorized', 'API token is invalid.');
      const version = request.headers['notion-version'];
      if (!version) throw new NotionError(400, 'missing_version', 'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.');
      const limit = this.rateLimits.findIndex((entry) => entry.path === undefined || entry.path === url.pathname);
      const [limited] = limit >= 0 ? this.rateLimits.splice(limit, 1) : [];
      if (limited) throw new NotionError(429, 'rate_limited', 'You have been rated limited. Please try again in a few minutes.', { 'retry-after': limited.retryAfter });
      if (this.unavailable.has(url.pathname)) throw new NotionError(503, 'service_unavailable', 'Notion is unavailable, please try again later.');
      send(200, this.route(method, url.pathname, url.searchParams, body));
    } catch (error) {
      if (!(error instanceof NotionError)) throw error;
      send(error.status, { object: 'error', status: error.status, code: error.code, message: error.message, request_id: randomUUID() }, error.headers);
    }
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ object: 'error', status: 500, code: 'internal_server_error', message: String(error) }));
      });
    });
    this.url = await listenOnLoopback(this.server);
    return this;
  }

  async stop(): Promise<void> {
    await closeLoopback(this.server);
  }
}
