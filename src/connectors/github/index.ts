import { type Connector, SourceConfigError, SourceHttpError, SourceUnreachableError } from '../connector.js';
import { GitHubApi, repositorySchema } from './github-api.js';
import { configSchema, credentialsSchema, cursorSchema, type GitHubConfig, type GitHubCredentials, type GitHubCursor, webOrigin } from './schemas.js';
import { githubRun } from './sync.js';
import { z } from 'zod';

/**
 * `github`: repositories on github.com or a GitHub Enterprise Server — their issues, pull requests,
 * comments, reviews, discussions, releases and default-branch files — through the REST API v3 (and
 * GraphQL for discussions), signed in with an OAuth app or a pasted personal access token.
 */

const connector: Connector<GitHubConfig, GitHubCredentials, GitHubCursor> = {
  shortName: 'github',
  name: 'GitHub',
  description:
    'Repositories on github.com or GitHub Enterprise Server: issues, pull requests, their comments and reviews, discussions, releases and the files of the default branch, with owner and repository (and the issue, for comments) as breadcrumbs. Incremental by update time; sign in with GitHub or paste a personal access token.',
  auth: {
    kind: 'oauth2',
    oauth: {
      // docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps (Enterprise: the same paths on its host).
      authorizeUrl: (config) => `${webOrigin(config.api_url)}/login/oauth/authorize`,
      tokenUrl: (config) => `${webOrigin(config.api_url)}/login/oauth/access_token`,
      scopes: ['repo', 'read:org', 'read:discussion'],
      pkce: true,
      // OAuth app tokens do not expire.
      refresh: 'none',
      clientAuthentication: 'body',
    },
    pasted: { credentials: credentialsSchema, token: (credentials) => credentials.personal_access_token },
  },
  config: configSchema,
  cursor: cursorSchema,
  // Under GitHub's secondary limit of 900 REST points a minute; the hourly budget is paced by its headers.
  requestRate: { requestsPerSecond: 15, burst: 30 },
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['code', 'issues', 'developer tools'],
  outputEntityDefinitions: [
    'GitHubRepositoryEntity',
    'GitHubIssueEntity',
    'GitHubPullRequestEntity',
    'GitHubCommentEntity',
    'GitHubReviewEntity',
    'GitHubDiscussionEntity',
    'GitHubReleaseEntity',
    'GitHubFileEntity',
  ],

  /** The token goes to the API's origin (GraphQL is on the same one). */
  credentialTargets(config) {
    try {
      return [new URL(config.api_url).origin];
    } catch {
      return [];
    }
  },

  async validate({ config, http }) {
    const api = new GitHubApi(http, config.api_url);
    try {
      await api.require('/user', z.object({ login: z.string() }));
    } catch (error) {
      if (error instanceof SourceUnreachableError) throw new SourceConfigError('api_url', error.message);
      if (error instanceof SourceHttpError && error.status === 404) throw new SourceConfigError('api_url', `No GitHub API answers at ${config.api_url}`);
      throw error;
    }
    for (const fullName of config.repositories) {
      const repository = await api.get(`/repos/${fullName}`, repositorySchema, { missing: [404] });
      if (!repository) throw new SourceConfigError('repositories', `${fullName}: no such repository, or the token cannot see it`);
    }
  },

  sync: (context) => githubRun(context),
};

export default connector;
