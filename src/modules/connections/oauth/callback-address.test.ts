import { describe, expect, test } from '@jest/globals';
import { OAuthCallbackAddress } from './callback-address.js';

describe('the OAuth callback address (the redirect_uri sign-ins send and the catalog shows)', () => {
  test('CATCHMENT_PUBLIC_URL, a path prefix and trailing slashes included, wins over the listening address', () => {
    const address = new OAuthCallbackAddress('https://catchment.example.com/team/');
    address.listeningOn('http://127.0.0.1:8080');
    expect(address.url()).toBe('https://catchment.example.com/team/oauth/callback');
  });

  test('without a public URL it is the listening address, and unknown before the server listens', () => {
    const address = new OAuthCallbackAddress(undefined);
    expect(() => address.url()).toThrow('CATCHMENT_PUBLIC_URL');
    address.listeningOn('http://127.0.0.1:43123');
    expect(address.url()).toBe('http://127.0.0.1:43123/oauth/callback');
  });
});
