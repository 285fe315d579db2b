/** The service's path providers send the browser back to after sign-in. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback';

/**
 * The `redirect_uri` providers are given: CATCHMENT_PUBLIC_URL (the address browsers reach the
 * service at, a path prefix included) + /oauth/callback, or, unset, the address this process listens
 * on, known once it listens. Registered as is in the provider's OAuth app settings.
 */
export class OAuthCallbackAddress {
  private listeningUrl: string | null = null;

  constructor(private readonly publicUrl: string | undefined) {}

  /** Called once the HTTP server listens (the port may have been chosen then). */
  listeningOn(url: string): void {
    this.listeningUrl = url;
  }

  url(): string {
    const base = this.publicUrl ?? this.listeningUrl;
    if (!base) throw new Error('The OAuth callback address is unknown: set CATCHMENT_PUBLIC_URL');
    return `${base.replace(/\/+$/, '')}${OAUTH_CALLBACK_PATH}`;
  }
}
