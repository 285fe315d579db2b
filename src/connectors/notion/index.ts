import { type Connector, httpOrigins } from '../connector.js';
import { SourceConfigError, SourceHttpError } from '../contract/errors.js';
import { NotionApi, UnexpectedNotionAnswerError } from './notion-api.js';
import { NotionConfig, type NotionCursor, NotionCursor as NotionCursorSchema, NotionToken } from './schemas.js';
import { notionRun } from './sync.js';

/**
 * `notion`: the pages, databases and database rows shared with a Notion integration, through
 * Notion's REST API (see sync.ts for the runs, render.ts for the text).
 *
 * Authentication: a public integration's OAuth (Notion's authorize page with `owner=user`; its token
 * endpoint takes JSON and HTTP Basic client authentication, and each refresh returns a new refresh
 * token), or an internal integration's token pasted as is. Both are sent as `Authorization: Bearer`.
 */
const notion: Connector<NotionConfig, NotionToken, NotionCursor> = {
  shortName: 'notion',
  name: 'Notion',
  description: 'Pages (blocks as Markdown), databases and their rows, with the page tree as breadcrumbs; incremental by last edit',
  auth: {
    kind: 'oauth2',
    oauth: {
      authorizeUrl: (config) => `${config.api_url.replace(/\/+$/, '')}/v1/oauth/authorize`,
      tokenUrl: (config) => `${config.api_url.replace(/\/+$/, '')}/v1/oauth/token`,
      // Notion has no scopes: what an integration may read is set on the integration and chosen by the user.
      scopes: [],
      pkce: false,
      refresh: 'rotating',
      clientAuthentication: 'basic',
      extraAuthorizeParameters: { owner: 'user' },
      tokenRequestEncoding: 'json',
    },
    pasted: { credentials: NotionToken, token: (credentials) => credentials.token },
  },
  config: NotionConfig,
  cursor: NotionCursorSchema,
  // Notion allows an average of three requests per second per integration, with short bursts.
  requestRate: { requestsPerSecond: 3, burst: 6 },
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['knowledge base', 'documents'],
  outputEntityDefinitions: ['NotionPageEntity', 'NotionDatabaseEntity', 'NotionDatabaseRowEntity'],
  credentialTargets: (config) => httpOrigins(config.api_url),

  async validate(context) {
    try {
      await new NotionApi(context.http, context.config.api_url).workspaceName();
    } catch (error) {
      // A refused token is CredentialsRejectedError already; any other refusal or shape means this is not Notion's API.
      if (error instanceof UnexpectedNotionAnswerError || error instanceof SourceHttpError) {
        throw new SourceConfigError('api_url', `${context.config.api_url} does not answer as Notion's API: ${error.message}`);
      }
      throw error;
    }
  },

  sync: (context) => notionRun(context),
};

export default notion;
