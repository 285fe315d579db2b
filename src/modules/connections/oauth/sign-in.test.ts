import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { OAuth2Spec } from '../../../connectors/contract/auth.js';
import { authorizeUrl } from './sign-in.js';

const spec = (overrides: Partial<OAuth2Spec> = {}): OAuth2Spec => ({
  authorizeUrl: () => 'https://provider.example/oauth/authorize?tenant=acme',
  tokenUrl: () => 'https://provider.example/oauth/token',
  scopes: ['read', 'write'],
  pkce: true,
  refresh: 'refresh',
  clientAuthentication: 'basic',
  ...overrides,
});

describe('authorizeUrl (RFC 6749 §4.1.1 with RFC 7636 S256)', () => {
  test('the connector URL keeps its query and gets the client, redirect URI, scopes, state and the verifier\'s S256 challenge', () => {
    const url = new URL(authorizeUrl(spec(), {}, { clientId: 'client 1', redirectUri: 'https://catchment.example/oauth/callback', state: 'state-1', codeVerifier: 'verifier-1' }));
    expect(`${url.origin}${url.pathname}`).toBe('https://provider.example/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: 'acme',
      response_type: 'code',
      client_id: 'client 1',
      redirect_uri: 'https://catchment.example/oauth/callback',
      state: 'state-1',
      scope: 'read write',
      code_challenge: createHash('sha256').update('verifier-1').digest('base64url'),
      code_challenge_method: 'S256',
    });
  });

  test('without PKCE no challenge; the scope separator is the connector\'s; extra parameters never replace the request\'s own', () => {
    const url = new URL(
      authorizeUrl(spec({ pkce: false, scopeSeparator: ',', extraAuthorizeParameters: { access_type: 'offline', state: 'attacker', client_id: 'other' } }), {}, {
        clientId: 'client-1',
        redirectUri: 'https://catchment.example/oauth/callback',
        state: 'state-1',
        codeVerifier: null,
      }),
    );
    expect(url.searchParams.get('scope')).toBe('read,write');
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('state')).toBe('state-1');
    expect(url.searchParams.get('client_id')).toBe('client-1');
    expect(url.searchParams.has('code_challenge')).toBe(false);
  });
});
