import { type Connector, httpOrigins } from '../connector.js';
import { DriveApi } from './drive-api.js';
import { DriveRun } from './drive-sync.js';
import { DriveConfig, DriveCursor, PastedToken } from './schemas.js';

/**
 * `google_drive`: the files and folders of Google Drive (My Drive, what is shared with the user,
 * shared drives) through the Drive API v3. Google Docs, Sheets and Slides are exported as text or
 * CSV; other files go through the text extraction local folders use. Folders and shared drives are
 * entities and breadcrumbs; sharing gives `access`. The first run lists everything, later runs read
 * the changes list (see DriveRun).
 */
const connector: Connector<DriveConfig, PastedToken, DriveCursor> = {
  shortName: 'google_drive',
  name: 'Google Drive',
  description:
    'Files and folders of Google Drive: My Drive, files shared with you and shared drives. Google Docs and Slides are read as text and Sheets as CSV (first sheet); PDF, Word, Markdown, text, HTML and source files through text extraction. Folders are breadcrumbs, sharing gives who can see each file. Incremental through the Drive changes list.',
  auth: {
    kind: 'oauth2',
    oauth: {
      authorizeUrl: (config) => config.oauth_authorize_url,
      tokenUrl: (config) => config.oauth_token_url,
      scopes: ['https://www.googleapis.com/auth/drive.readonly'],
      pkce: true,
      // Access tokens last an hour; the refresh token stays valid (Google returns it only with access_type=offline).
      refresh: 'refresh',
      clientAuthentication: 'body',
      extraAuthorizeParameters: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
    },
    pasted: { credentials: PastedToken, token: (credentials) => credentials.access_token },
  },
  config: DriveConfig,
  cursor: DriveCursor,
  // Google allows 12,000 queries a minute per user and per project (shared by every user of the app).
  requestRate: { requestsPerSecond: 20, burst: 40 },
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['files', 'storage', 'documents'],
  outputEntityDefinitions: ['GoogleDriveSharedDriveEntity', 'GoogleDriveFolderEntity', 'GoogleDriveFileEntity'],

  credentialTargets: (config) => httpOrigins(config.api_url),

  /** A listing of one item proves the token and its scope; a chosen shared drive must be readable. */
  async validate({ config, http }) {
    const api = new DriveApi(http, config.api_url);
    if (config.corpora === 'drive') {
      await api.requireDrive(config.drive_id!);
    }
    await api.listFiles(config.corpora === 'drive' ? { kind: 'drive', driveId: config.drive_id! } : { kind: 'user' }, 'trashed = false', 1, null);
  },

  sync(context) {
    return new DriveRun(new DriveApi(context.http, context.config.api_url), context);
  },
};

export default connector;
