import { z } from 'zod';
import { httpBaseUrl } from '../contract/schemas.js';

/** The connector's config, pasted credentials and cursor. */

export const DEFAULT_API_URL = 'https://api.notion.com';

export const NotionConfig = z
  .strictObject({
    api_url: httpBaseUrl(DEFAULT_API_URL)
      .default(DEFAULT_API_URL)
      .meta({ title: 'API URL', description: "Notion's API origin (change it only for a proxy in front of Notion, or a test server)" }),
    full_listing_every_hours: z
      .number()
      .int()
      .min(0)
      .max(720)
      .default(24)
      .meta({
        title: 'Full listing every (hours)',
        description:
          'How often a sync lists everything shared with the integration, so pages and databases deleted or no longer shared are removed (0: every sync). Other syncs read only what was edited since the previous one.',
      }),
  })
  .meta({ title: 'Notion', description: 'Pages, databases and database rows shared with the integration' });
export type NotionConfig = z.infer<typeof NotionConfig>;

export const NotionToken = z
  .strictObject({
    token: z
      .string()
      .trim()
      .regex(/^(secret_|ntn_)\S+$/, 'An internal integration token starts with secret_ or ntn_')
      .meta({ title: 'Internal integration token', description: "The integration's secret, from Notion's integration settings (secret_… or ntn_…)", secret: true }),
  })
  .meta({ title: 'Internal integration token' });
export type NotionToken = z.infer<typeof NotionToken>;

export const ENTITY_TYPES = { page: 'notion_page', database: 'notion_database', row: 'notion_database_row' } as const;

/** What a run remembers of an object: its last edit (unchanged objects are kept unread) and its place in the tree. */
const TrackedObject = z.strictObject({
  edited: z.string(),
  type: z.enum([ENTITY_TYPES.page, ENTITY_TYPES.database, ENTITY_TYPES.row]),
  title: z.string(),
  /** The page or database it sits in, null under the workspace (or under something not shared). */
  parent: z.string().nullable(),
});
export type TrackedObject = z.infer<typeof TrackedObject>;

export const NotionCursor = z.strictObject({
  version: z.literal(1),
  /** The API the objects were read from: a cursor of another one says nothing about this one. */
  api_url: z.string(),
  /** Objects edited at or after this time (ISO) are listed again; Notion rounds edit times to the minute. */
  edited_since: z.string().nullable(),
  /** When the last complete listing started (ISO), null before the first. */
  listed_at: z.string().nullable(),
  objects: z.record(z.string(), TrackedObject),
});
export type NotionCursor = z.infer<typeof NotionCursor>;
