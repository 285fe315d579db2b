import type { NextFunction, Request, Response } from 'express';
import type { AuthService } from '../modules/organizations/auth.service.js';
import type { Principal } from '../modules/organizations/principal.js';
import { UnauthenticatedError } from '../shared/errors.js';
import { sendError } from './send-error.js';

declare module 'express-serve-static-core' {
  interface Locals {
    /** Set by `authenticate`; null when the request carried no credentials. */
    principal: Principal | null;
    requestId: string;
  }
}

/**
 * Resolves the request's credentials. Wrong credentials are refused here with 401; missing ones
 * leave `principal` null so each operation decides (GraphQL introspection needs none).
 * When both an API key and a bearer token are sent, they must name the same organization, and the
 * user of the token is the caller (the spec has clients send the key on every call and add the
 * token where a user's role is needed).
 */
export async function resolvePrincipal(auth: AuthService, headers: Request['headers']): Promise<Principal | null> {
  const apiKey = headers['x-api-key'];
  const authorization = headers.authorization;
  const keyPrincipal = typeof apiKey === 'string' && apiKey !== '' ? await auth.authenticateApiKey(apiKey) : null;
  if (authorization === undefined || authorization === '') return keyPrincipal;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new UnauthenticatedError('Authorization header must be "Bearer <token>"');
  const userPrincipal = await auth.authenticateBearer(match[1]!);
  if (keyPrincipal && keyPrincipal.organizationId !== userPrincipal.organizationId) {
    throw new UnauthenticatedError('The API key and the bearer token belong to different organizations');
  }
  return userPrincipal;
}

export function authenticate(auth: AuthService) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.principal = await resolvePrincipal(auth, req.headers);
      next();
    } catch (error) {
      if (error instanceof UnauthenticatedError) sendError(res, error);
      else next(error);
    }
  };
}
