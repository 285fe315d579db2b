import type { Role } from './organization.entity.js';

/** Who is calling: an organization's API key, or a user holding a bearer token. */
export type Principal =
  | { kind: 'api_key'; organizationId: string; apiKeyId: string; role: Role; email: null }
  | {
      kind: 'user';
      organizationId: string;
      userId: string;
      role: Role;
      email: string;
      /** When the bearer token stops being valid (epoch milliseconds): open streams end then. */
      tokenExpiresAt: number;
    };
