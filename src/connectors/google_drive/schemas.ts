import { z } from 'zod';
import { httpBaseUrl, maxFileBytes, nonBlankString } from '../contract/schemas.js';

// developers.google.com/identity/protocols/oauth2/web-server: Google's OAuth 2 endpoints for web server apps.
const GOOGLE_AUTHORIZE_URL = 'https://accounts.google.com/o/oauth2/v2/auth';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/**
 * What a Google Drive connection reads, and from where. The OAuth endpoints are config like the API's
 * origin (Google's by default), so the same code signs in against a proxy or a local test server.
 */
export const DriveConfig = z
  .strictObject({
    api_url: httpBaseUrl('https://www.googleapis.com')
      .default('https://www.googleapis.com')
      .meta({ title: 'API base URL', description: 'Where the Drive API v3 answers (https://www.googleapis.com); another origin only for a proxy or a test server.' }),
    corpora: z
      .enum(['allDrives', 'user', 'drive'])
      .default('allDrives')
      .meta({
        title: 'Drives',
        description:
          'allDrives: My Drive, what is shared with you, and every shared drive you are a member of; user: My Drive and what is shared with you; drive: one shared drive (drive_id).',
      }),
    drive_id: nonBlankString().optional().meta({ title: 'Shared drive ID', description: 'The shared drive read when corpora is "drive" (the ID in its URL: drive.google.com/drive/folders/<ID>).' }),
    max_file_bytes: maxFileBytes(20 * 1024 * 1024, 'Larger files are skipped. Google exports Docs, Sheets and Slides up to 10 MB.'),
    page_size: z.int().min(1).max(1000).default(100).meta({ title: 'Page size', description: 'Items asked for per request of a listing (Google allows up to 1000).' }),
    oauth_authorize_url: httpBaseUrl(GOOGLE_AUTHORIZE_URL)
      .default(GOOGLE_AUTHORIZE_URL)
      .meta({ title: 'OAuth authorization endpoint', description: `Where a browser sign-in is sent (${GOOGLE_AUTHORIZE_URL}); another only for a proxy or a test server.` }),
    oauth_token_url: httpBaseUrl(GOOGLE_TOKEN_URL)
      .default(GOOGLE_TOKEN_URL)
      .meta({ title: 'OAuth token endpoint', description: `Where codes are exchanged and tokens refreshed (${GOOGLE_TOKEN_URL}); another only for a proxy or a test server.` }),
  })
  .superRefine((config, context) => {
    if (config.corpora === 'drive' && !config.drive_id) context.addIssue({ code: 'custom', path: ['drive_id'], message: 'Field required when corpora is "drive"', params: { type: 'missing' } });
  });
export type DriveConfig = z.infer<typeof DriveConfig>;

/** An access token pasted instead of signing in. */
export const PastedToken = z.strictObject({
  access_token: nonBlankString().meta({
    title: 'Access token',
    description:
      'An OAuth access token with the drive.readonly scope (for example from the OAuth Playground). Google access tokens expire after an hour and cannot be refreshed from here: sign in with Google for a connection that keeps syncing.',
    secret: true,
  }),
});
export type PastedToken = z.infer<typeof PastedToken>;

/**
 * Where the next run continues. `changes_token` is the changes page token the next incremental run
 * starts from (taken before a full listing began, so nothing changed during it is missed). While a
 * full listing is under way, `listing` says which corpus, stage and page it had reached.
 */
export const DriveCursor = z.strictObject({
  version: z.literal(1),
  /** The API origin, corpora and drive the cursor belongs to: another config starts over. */
  target: z.string(),
  /** The text extraction's version: a newer one reads every file again. */
  extraction: z.int(),
  changes_token: z.string(),
  listing: z
    .strictObject({
      /** `user`, or a shared drive's id. */
      corpus: z.string(),
      stage: z.enum(['folders', 'files']),
      page_token: z.string().nullable(),
    })
    .nullable(),
});
export type DriveCursor = z.infer<typeof DriveCursor>;
export type ListingPosition = NonNullable<DriveCursor['listing']>;
