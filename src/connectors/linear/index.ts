import { z } from 'zod';
import { httpBaseUrl } from '../contract/schemas.js';
import { type Connector, httpOrigins, SourceConfigError, SourceHttpError } from '../connector.js';
import { graphqlClient, type LinearConfig, type LinearCursor, linearCursor, runSync } from './sync.js';
import { ORGANIZATION, organizationAnswer } from './queries.js';

/**
 * `linear`: a Linear workspace over its GraphQL API — teams, projects, issues (state, priority,
 * assignee, labels, Markdown description), their comments, and documents — with the team → project →
 * issue hierarchy as breadcrumbs. Incremental by `updatedAt` (see ./sync.ts). Connected by OAuth
 * (Linear's refresh tokens rotate) or with a personal API key, which Linear takes without `Bearer`.
 */

const DEFAULT_API_URL = 'https://api.linear.app';

const apiUrl = httpBaseUrl('https://api.linear.app');

const config = z.strictObject({
  api_url: apiUrl
    .default(DEFAULT_API_URL)
    .meta({ title: 'API URL', description: 'Origin of the Linear API (its GraphQL endpoint is <API URL>/graphql and its OAuth token endpoint <API URL>/oauth/token).' }),
  include_comments: z.boolean().default(true).meta({ title: 'Include comments', description: 'Index the comments of issues.' }),
  include_documents: z.boolean().default(true).meta({ title: 'Include documents', description: 'Index documents (project documents and others the account can read).' }),
  page_size: z
    .number()
    .int()
    .min(10)
    .max(100)
    .default(50)
    .meta({ title: 'Page size', description: 'Nodes per request. Nested lists multiply a query\'s complexity, which Linear limits per request and per hour.' }),
});

const apiKey = z.strictObject({
  api_key: z
    .string()
    .trim()
    .min(1)
    .meta({ title: 'API key', description: 'A personal API key (Linear: Settings → Security & access → Personal API keys).', secret: true }),
});
type ApiKey = z.infer<typeof apiKey>;

const connector: Connector<LinearConfig, ApiKey, LinearCursor> = {
  shortName: 'linear',
  name: 'Linear',
  description:
    'Teams, projects, issues (with state, priority, assignee and labels), issue comments and documents of a Linear workspace, read through its GraphQL API, with team → project → issue breadcrumbs. Incremental by last update; archived and trashed items are removed. Sign in with Linear (OAuth) or paste a personal API key.',
  auth: {
    kind: 'oauth2',
    oauth: {
      // Linear's authorize page is on its app's origin, whatever the API URL; the token endpoint is on the API's.
      authorizeUrl: () => 'https://linear.app/oauth/authorize',
      tokenUrl: (config) => `${config.api_url}/oauth/token`,
      scopes: ['read'],
      // "Comma separated list of scopes" (linear.app/developers/oauth-2-0-authentication).
      scopeSeparator: ',',
      pkce: true,
      // Apps created since October 2025 (all of them since April 2026) get expiring access tokens and
      // refresh tokens; a refresh answers a new refresh token that replaces the previous one.
      refresh: 'rotating',
      clientAuthentication: 'body',
      tokenRequestEncoding: 'form',
    },
    pasted: { credentials: apiKey, token: (credentials) => credentials.api_key },
  },
  // OAuth tokens are bearer tokens; personal API keys go in the header as they are.
  authHeaders: (token, source) => ({ Authorization: source === 'oauth' ? `Bearer ${token}` : token }),
  config,
  cursor: linearCursor,
  // Linear refills 5,000 requests an hour per user or app (a leaky bucket the size of the hour): a long
  // run settles near 1.3 a second, with room for a burst.
  requestRate: { requestsPerSecond: 1.3, burst: 60 },
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['project management', 'issues'],
  outputEntityDefinitions: ['LinearTeamEntity', 'LinearProjectEntity', 'LinearIssueEntity', 'LinearCommentEntity', 'LinearDocumentEntity'],

  credentialTargets: (config) => httpOrigins(config.api_url),

  async validate(context) {
    try {
      await graphqlClient(context).query(ORGANIZATION, {}, organizationAnswer);
    } catch (error) {
      // An API URL that answers something else than Linear's GraphQL (a 404, an HTML page) is the config's fault.
      if (error instanceof SourceHttpError && error.status !== 400) throw new SourceConfigError('api_url', `${context.config.api_url} does not answer as the Linear API (${error.status})`);
      throw error;
    }
  },

  sync: (context) => runSync(context),
};

export default connector;
