import { z } from 'zod';
import { httpOrigins, type Connector } from '../connector.js';
import { CredentialsRejectedError, SourceConfigError, SourceHttpError, SourceUnreachableError } from '../contract/errors.js';
import { GitLabApi } from './api.js';
import { gitlabConfig, gitlabCredentials, gitlabCursor, webRoot, type GitLabConfig, type GitLabCredentials, type GitLabCursor } from './config.js';
import { resolveProjects, runSync } from './sync.js';

/**
 * `gitlab`: projects of GitLab.com or a self-managed instance (REST API v4) — the projects, their
 * issues and merge requests with their comments, wiki pages, and files at the default branch.
 * Signs in with OAuth (GitLab's provider: PKCE, access tokens of two hours, rotating refresh tokens)
 * or takes a pasted personal, project or group access token; both are sent as `Authorization: Bearer`.
 * How runs are incremental and resume: see ./sync.ts.
 */
const connector: Connector<GitLabConfig, GitLabCredentials, GitLabCursor> = {
  shortName: 'gitlab',
  name: 'GitLab',
  description:
    'Projects on GitLab.com or a self-managed GitLab: issues, merge requests and their comments, wiki pages, and the files of the default branch, with namespace → project as breadcrumbs. Sign in with OAuth or paste an access token (read_api, read_repository). Incremental by update time; resumes after a failure.',
  auth: {
    kind: 'oauth2',
    oauth: {
      authorizeUrl: (config) => `${webRoot(config)}/oauth/authorize`,
      tokenUrl: (config) => `${webRoot(config)}/oauth/token`,
      scopes: ['read_api', 'read_repository'],
      pkce: true,
      refresh: 'rotating',
      clientAuthentication: 'body',
    },
    pasted: { credentials: gitlabCredentials, token: (credentials) => credentials.access_token },
  },
  config: gitlabConfig,
  cursor: gitlabCursor,
  // GitLab.com allows 2,000 authenticated API requests a minute; self-managed instances often fewer.
  requestRate: { requestsPerSecond: 10, burst: 20 },
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['code', 'project management'],
  outputEntityDefinitions: ['GitlabProjectEntity', 'GitlabIssueEntity', 'GitlabMergeRequestEntity', 'GitlabNoteEntity', 'GitlabWikiPageEntity', 'GitlabFileEntity'],
  // The token goes to the instance's origin only (API and OAuth endpoints live there).
  credentialTargets: (config) => httpOrigins(webRoot(config)),

  async validate({ config, http }) {
    const api = new GitLabApi(http, config);
    try {
      await api.get('/user', z.object({ id: z.number() }));
    } catch (error) {
      if (error instanceof SourceUnreachableError) throw new SourceConfigError('base_url', `Cannot reach GitLab at ${webRoot(config)}: ${error.message}`);
      // A token without the read_api scope: `403 {"error":"insufficient_scope"}`.
      if (error instanceof SourceHttpError && error.status === 403) throw new CredentialsRejectedError('GitLab refused the token: it needs the read_api scope');
      if (error instanceof SourceHttpError && error.status === 404) throw new SourceConfigError('base_url', `No GitLab API answers at ${webRoot(config)}/api/v4`);
      throw error;
    }
    if (config.projects.length > 0) await resolveProjects(api, config);
  },

  sync: (context) => runSync(context),
};

export default connector;
