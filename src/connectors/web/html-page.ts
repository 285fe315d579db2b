import { convert } from 'html-to-text';
import { normalizeUrl } from '../../platform/http/web-client.js';

/** What the crawler reads from an HTML page besides its text: title, headings, links and robots directives. */
export interface PageOutline {
  title: string | null;
  headings: { level: number; text: string }[];
  /** Absolute http(s) links, fragments removed, in page order, without duplicates. */
  links: string[];
  noindex: boolean;
  nofollow: boolean;
}

/** Text of an HTML fragment (entities decoded, tags gone, whitespace collapsed). */
const fragmentText = (html: string) => convert(html, { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }] }).replace(/\s+/g, ' ').trim();

const attribute = (tag: string, name: string) => new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, 'i').exec(tag)?.slice(1).find((value) => value !== undefined);

/** Undoes the entity escapes that occur in attribute values (`&amp;` in query strings above all). */
const decodeAttribute = (value: string) => value.replace(/&amp;/gi, '&').replace(/&#38;/g, '&').replace(/&quot;/gi, '"').replace(/&#39;/g, "'").trim();

export function outlinePage(html: string, pageUrl: string): PageOutline {
  // Comments and scripts would otherwise yield links and headings that readers never see.
  const visible = html.replace(/<!--[\s\S]*?-->/g, '').replace(/<(script|style|template|noscript)\b[\s\S]*?<\/\1\s*>/gi, '');
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(visible);
  const title = titleMatch ? fragmentText(titleMatch[1]!) || null : null;
  const headings = [...visible.matchAll(/<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi)].map((match) => ({ level: Number(match[1]), text: fragmentText(match[2]!) })).filter((heading) => heading.text);

  const baseTag = /<base\b[^>]*>/i.exec(visible)?.[0];
  const baseHref = baseTag ? attribute(baseTag, 'href') : undefined;
  const base = (baseHref && normalizeUrl(decodeAttribute(baseHref), pageUrl)) || pageUrl;
  const links = new Set<string>();
  for (const [tag] of visible.matchAll(/<a\b[^>]*>/gi)) {
    const href = attribute(tag, 'href');
    if (!href) continue;
    const rel = attribute(tag, 'rel')?.toLowerCase() ?? '';
    if (rel.split(/\s+/).includes('nofollow')) continue;
    const url = normalizeUrl(decodeAttribute(href), base);
    if (url) links.add(url);
  }

  let noindex = false;
  let nofollow = false;
  for (const [tag] of visible.matchAll(/<meta\b[^>]*>/gi)) {
    const name = attribute(tag, 'name')?.toLowerCase();
    if (name !== 'robots' && name !== 'catchment') continue;
    const directives = (attribute(tag, 'content') ?? '').toLowerCase().split(/[\s,]+/);
    if (directives.includes('noindex') || directives.includes('none')) noindex = true;
    if (directives.includes('nofollow') || directives.includes('none')) nofollow = true;
  }
  return { title, headings, links: [...links], noindex, nofollow };
}
