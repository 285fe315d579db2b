/**
 * What kind of URL a text is: an http(s) address (endpoints and redirects people configure), and the
 * links that may be shown.
 *
 * Links shown to people and agents (a result's `web_url` and `url`) end up in `href` attributes, where
 * a `javascript:` or `data:` URL runs script in the viewer's page. Only the schemes the sources
 * produce pass: the web, files and local git repositories (`file:`), and the SQL sources' row
 * addresses. Anything else (a `javascript:` link in an RSS item, or one pushed before pushes were
 * checked) is shown as no link at all.
 */
const LINK_PROTOCOLS = new Set(['http:', 'https:', 'file:', 'postgresql:', 'mysql:']);

/** The URL's scheme, lower-cased with its colon (`https:`), or null when it is not an absolute URL. */
export function protocolOf(url: string): string | null {
  return URL.canParse(url) ? new URL(url).protocol : null;
}

/** `url` when its scheme is one a link may have, else the empty string (the spec's `web_url` is a string). */
export function safeWebUrl(url: string): string {
  const protocol = protocolOf(url);
  return protocol !== null && LINK_PROTOCOLS.has(protocol) ? url : '';
}

/** Like safeWebUrl for the optional `url` (a file's address): null when absent or not linkable. */
export function safeFileUrl(url: string | null): string | null {
  return url === null ? null : safeWebUrl(url) || null;
}

/** An absolute http or https URL (what a token or authorization endpoint, or a browser redirect, must be). */
export const isHttpUrl = (value: string) => {
  const protocol = protocolOf(value);
  return protocol === 'http:' || protocol === 'https:';
};
