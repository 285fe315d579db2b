import { z } from 'zod';
import type { SourceHttpClient } from '../contract/source-http.js';

/**
 * The part of Notion's REST API the connector reads (developers.notion.com/reference, API version
 * 2022-06-28), with the shapes it relies on as zod schemas. Objects are loose: Notion adds fields
 * over time, and only the ones read here must be there.
 */
export const NOTION_VERSION = '2022-06-28';

/** Notion's list pages hold at most 100 results (`page_size` maximum). */
const PAGE_SIZE = 100;

export const RichText = z.looseObject({ plain_text: z.string(), href: z.string().nullish() });
export type RichText = z.infer<typeof RichText>;

/** Where an object sits: the workspace, a page, a database, or a block of a page (columns, toggles). */
export const Parent = z.looseObject({
  type: z.string(),
  page_id: z.string().optional(),
  database_id: z.string().optional(),
  block_id: z.string().optional(),
});
export type Parent = z.infer<typeof Parent>;

/** A property value of a page: its `type` names the key holding the value (see render.ts). */
export const PropertyValue = z.looseObject({ id: z.string().optional(), type: z.string() });
export type PropertyValue = z.infer<typeof PropertyValue> & Record<string, unknown>;

const Trashable = {
  archived: z.boolean().default(false),
  /** Since April 2024, alongside `archived`. */
  in_trash: z.boolean().default(false),
};

export const Page = z.looseObject({
  object: z.literal('page'),
  id: z.string(),
  created_time: z.string(),
  last_edited_time: z.string(),
  url: z.string(),
  parent: Parent,
  properties: z.record(z.string(), PropertyValue),
  ...Trashable,
});
export type Page = z.infer<typeof Page>;

/** A database's property as its schema declares it (`type` and, for selects, the options). */
export const PropertySchema = z.looseObject({ id: z.string(), name: z.string(), type: z.string() });
export type PropertySchema = z.infer<typeof PropertySchema> & Record<string, unknown>;

export const Database = z.looseObject({
  object: z.literal('database'),
  id: z.string(),
  created_time: z.string(),
  last_edited_time: z.string(),
  url: z.string(),
  parent: Parent,
  title: z.array(RichText),
  description: z.array(RichText).default([]),
  properties: z.record(z.string(), PropertySchema),
  is_inline: z.boolean().default(false),
  ...Trashable,
});
export type Database = z.infer<typeof Database>;

/** A block; its content is under the key its `type` names (`paragraph: { rich_text }`…). */
export const Block = z.looseObject({
  object: z.literal('block'),
  id: z.string(),
  type: z.string(),
  has_children: z.boolean(),
  parent: Parent.optional(),
  ...Trashable,
});
export type Block = z.infer<typeof Block> & Record<string, unknown>;

const listOf = <T extends z.ZodType>(item: T) => z.looseObject({ object: z.literal('list'), results: z.array(item), next_cursor: z.string().nullable(), has_more: z.boolean() });

const SearchResult = z.discriminatedUnion('object', [Page, Database]);
export type SearchResult = z.infer<typeof SearchResult>;

/** The bot user behind the token (`GET /v1/users/me`): its workspace's name, when Notion tells it. */
const BotUser = z.looseObject({ object: z.literal('user'), bot: z.looseObject({ workspace_name: z.string().nullish() }).optional() });

/** A Notion answer that does not have the documented shape: the API URL is not Notion's, or Notion changed. */
export class UnexpectedNotionAnswerError extends Error {
  override name = 'UnexpectedNotionAnswerError';
}

function parse<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new UnexpectedNotionAnswerError(`Notion answered ${what} with an unexpected shape (${issue.path.join('.') || 'body'}: ${issue.message})`);
}

/** The requests the connector sends, each through the connection's client (token, retries, pacing, address guard). */
export class NotionApi {
  private readonly base: string;
  private readonly headers = { 'Notion-Version': NOTION_VERSION };

  constructor(
    private readonly http: SourceHttpClient,
    apiUrl: string,
  ) {
    this.base = apiUrl.replace(/\/+$/, '');
  }

  /**
   * The workspace's name, from the token's bot user (`GET /v1/users/me`): a cheap request that the
   * token is accepted. Null when Notion does not say, or refuses (403) an integration without the
   * capability to read user information.
   */
  async workspaceName(): Promise<string | null> {
    const response = await this.http.getJson(`${this.base}/v1/users/me`, { headers: this.headers, acceptStatuses: [403] });
    if (response.status === 403) return null;
    return parse(BotUser, response.body, 'GET /v1/users/me').bot?.workspace_name ?? null;
  }

  /**
   * Pages (database rows included) and databases shared with the integration, newest edit first:
   * `POST /v1/search` sorted by `last_edited_time` descending, paged by `start_cursor`.
   */
  async *search(): AsyncGenerator<SearchResult> {
    yield* this.paginate('POST /v1/search', SearchResult, (start_cursor) =>
      this.http.postJson(`${this.base}/v1/search`, { sort: { timestamp: 'last_edited_time', direction: 'descending' }, page_size: PAGE_SIZE, start_cursor }, { headers: this.headers }),
    );
  }

  /** The rows of a database (`POST /v1/databases/{id}/query`), paged by `start_cursor`. */
  async *queryDatabase(databaseId: string): AsyncGenerator<Page> {
    yield* this.paginate('POST /v1/databases/{id}/query', Page, (start_cursor) =>
      this.http.postJson(`${this.base}/v1/databases/${encodeURIComponent(databaseId)}/query`, { page_size: PAGE_SIZE, start_cursor }, { headers: this.headers }),
    );
  }

  /**
   * The child blocks of a page or block (`GET /v1/blocks/{id}/children`), or null when Notion
   * answers 404 (deleted meanwhile, or no longer shared with the integration).
   */
  async blockChildren(blockId: string): Promise<Block[] | null> {
    const blocks: Block[] = [];
    let cursor: string | undefined;
    do {
      const response = await this.http.getJson(`${this.base}/v1/blocks/${encodeURIComponent(blockId)}/children`, {
        headers: this.headers,
        query: { page_size: PAGE_SIZE, start_cursor: cursor },
        acceptStatuses: [404],
      });
      if (response.status === 404) return null;
      const page = parse(listOf(Block), response.body, 'GET /v1/blocks/{id}/children');
      blocks.push(...(page.results as Block[]));
      cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
    } while (cursor);
    return blocks;
  }

  /** One page, database or block by id (for parents outside the listing), or null when not shared (404). */
  async retrieve(kind: 'pages', id: string): Promise<Page | null>;
  async retrieve(kind: 'databases', id: string): Promise<Database | null>;
  async retrieve(kind: 'blocks', id: string): Promise<Block | null>;
  async retrieve(kind: 'pages' | 'databases' | 'blocks', id: string): Promise<Page | Database | Block | null> {
    const response = await this.http.getJson(`${this.base}/v1/${kind}/${encodeURIComponent(id)}`, { headers: this.headers, acceptStatuses: [404] });
    if (response.status === 404) return null;
    const schema = kind === 'pages' ? Page : kind === 'databases' ? Database : Block;
    return parse(schema, response.body, `GET /v1/${kind}/{id}`) as Page | Database | Block;
  }

  private async *paginate<T extends z.ZodType>(what: string, item: T, request: (startCursor: string | undefined) => Promise<{ body: unknown }>): AsyncGenerator<z.infer<T>> {
    let cursor: string | undefined;
    do {
      const page = parse(listOf(item), (await request(cursor)).body, what);
      yield* page.results as z.infer<T>[];
      cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
    } while (cursor);
  }
}
