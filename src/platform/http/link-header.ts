/**
 * The next page's URL from a `Link` header (RFC 8288), or null on the last page: the pagination of
 * GitHub's and GitLab's REST APIs. `rel` may list several relation types (`rel="next last"`).
 */
export function nextPageUrl(link: string | null): string | null {
  for (const part of (link ?? '').split(',')) {
    const match = /^\s*<([^>]+)>\s*;(.*)$/.exec(part);
    if (match && /\brel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?/.test(match[2]!)) return match[1]!;
  }
  return null;
}
