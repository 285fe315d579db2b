import { XMLParser } from 'fast-xml-parser';
import robotsParserModule from 'robots-parser';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Logger } from '../../platform/logger.js';
import { httpOrigins, SourceConfigError, type Breadcrumb, type Connector, type SkippedItem, type SourceEntity, type SourceItem } from '../connector.js';
import { EXTRACTION_VERSION, extractText, isSupported } from '../text-extraction/extract-text.js';
import { outlinePage } from './html-page.js';
import { FetchFailedError, fetchResource, normalizeUrl, USER_AGENT, type FetchedResource, type FetchOptions } from '../../platform/http/web-client.js';

/**
 * `web`: a website crawled from start URLs, staying on their origins (scheme, host and port),
 * breadth first up to a depth and a number of pages, seeded also by each origin's sitemap.xml (and
 * the sitemaps robots.txt names). robots.txt is obeyed for the `Catchment` user agent, with its
 * Crawl-delay; `<meta name="robots" content="noindex|nofollow">` too. Each page (HTML, or text/PDF
 * served as such) becomes a `web_page` entity: clean text with its title and headings, the URL path
 * as breadcrumbs.
 *
 * Re-syncs send the validators of the last copy (If-None-Match / If-Modified-Since): a 304 is a
 * keep marker and the links remembered in the cursor keep the crawl going. Runs are `complete`:
 * pages no longer reached, or answering 404/410, are removed. Pages that fail for a moment (a
 * timeout, 5xx, 429) are kept as they were rather than removed; a site that cannot be reached at
 * all fails the run. Pages left out are reported (SyncContext.reportSkipped) by URL: refused by
 * robots.txt, beyond max_pages, gone, unreadable with no copy kept, too large, of an unsupported
 * type, marked noindex or without text.
 */

const config = z.strictObject({
  start_urls: z.array(z.string()).meta({ title: 'Start URLs', description: 'Pages where the crawl starts; only pages on their origins (scheme, host, port) are read.' }),
  max_depth: z.int().min(0).max(50).default(3).meta({ title: 'Link depth', description: 'How many links away from a start URL (or a sitemap entry) the crawl goes; 0 reads only those.' }),
  max_pages: z.int().min(1).max(100_000).default(500).meta({ title: 'Most pages', description: 'The crawl stops queueing pages after this many.' }),
  concurrency: z.int().min(1).max(16).default(2).meta({ title: 'Parallel requests', description: 'Requests in flight at once (1 when robots.txt sets a Crawl-delay, which is then waited between requests).' }),
  timeout_seconds: z.int().min(1).max(600).default(20).meta({ title: 'Request timeout (seconds)' }),
  use_sitemap: z.boolean().default(true).meta({ title: 'Use sitemaps', description: 'Also crawl the pages listed by /sitemap.xml and the sitemaps robots.txt names.' }),
  max_page_bytes: z.int().min(1).default(10 * 1024 * 1024).meta({ title: 'Largest page (bytes)', description: 'Larger responses are skipped.' }),
});

type WebConfig = z.infer<typeof config>;

// robots-parser is CommonJS typed as an ES module: its default import is the function itself.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** Crawl-delay is honoured up to this (a larger value would stall the job for hours). */
const MAX_CRAWL_DELAY_MS = 30_000;
const MAX_SITEMAP_FILES = 50;

/** What the last run learnt of a URL it fetched. */
const pageState = z.object({
  /** The entity's id (the URL after redirects), or null when the page was not indexed (noindex, no text). */
  entityId: z.string().nullable(),
  etag: z.string().nullable(),
  lastModified: z.string().nullable(),
  /** Same-site links found on the page, to crawl on when it answers 304. */
  links: z.array(z.string()),
  /** Why the page was not indexed, reported again while it answers 304. */
  skipped: z.string().optional(),
});

type PageState = z.infer<typeof pageState>;

const cursor = z.object({ version: z.literal(1), extraction: z.number(), pages: z.record(z.string(), pageState) });

export type WebCursor = z.infer<typeof cursor>;

function startUrls(config: WebConfig): string[] {
  if (config.start_urls.length === 0) throw new SourceConfigError('start_urls', 'At least one start URL is required');
  return config.start_urls.map((text) => {
    const url = normalizeUrl(text.trim());
    if (!url || !/^https?:\/\//i.test(text.trim())) throw new SourceConfigError('start_urls', `"${text}" is not an http:// or https:// URL without user info`);
    return url;
  });
}

interface Robots {
  allowed(url: string): boolean;
  sitemaps: string[];
  delayMs: number;
}

/**
 * An origin's robots.txt. Missing (4xx) allows everything; a server error or no answer stops the
 * run (RFC 9309 says to assume everything disallowed, and a complete run that read nothing would
 * remove every page).
 */
async function loadRobots(origin: string, fetchOptions: FetchSettings): Promise<Robots> {
  const robotsUrl = `${origin}/robots.txt`;
  const answer = await fetchResource(robotsUrl, { ...fetchOptions, maxBytes: 512 * 1024, accept: 'text/plain' });
  if (answer.status >= 500 || answer.status === 429) throw new FetchFailedError(`${robotsUrl} answered HTTP ${answer.status}; the site is not crawled while its robots.txt is unavailable`);
  if (answer.status >= 400 || answer.truncated) return { allowed: () => true, sitemaps: [], delayMs: 0 };
  const robots = robotsParser(robotsUrl, answer.body.toString('utf8'));
  return {
    allowed: (url) => robots.isAllowed(url, USER_AGENT) !== false,
    sitemaps: robots.getSitemaps(),
    delayMs: Math.min((robots.getCrawlDelay(USER_AGENT) ?? 0) * 1000, MAX_CRAWL_DELAY_MS),
  };
}

type FetchSettings = Pick<FetchOptions, 'client' | 'signal' | 'timeoutMs' | 'maxBytes'>;

const xml = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, isArray: (name) => name === 'url' || name === 'sitemap' });

/** Page URLs listed by sitemaps (following sitemap indexes); sitemaps that fail or do not parse are ignored. */
async function readSitemaps(first: string[], settings: FetchSettings, logger: Logger): Promise<string[]> {
  const pending = [...new Set(first)];
  const visited = new Set<string>();
  const pages: string[] = [];
  while (pending.length && visited.size < MAX_SITEMAP_FILES) {
    const url = pending.shift()!;
    if (visited.has(url)) continue;
    visited.add(url);
    try {
      const answer = await fetchResource(url, { ...settings, accept: 'application/xml, text/xml' });
      if (answer.status !== 200 || answer.truncated) continue;
      const document = xml.parse(answer.body.toString('utf8')) as { urlset?: { url?: { loc?: unknown }[] }; sitemapindex?: { sitemap?: { loc?: unknown }[] } };
      for (const entry of document.urlset?.url ?? []) if (typeof entry.loc === 'string') pages.push(entry.loc.trim());
      for (const entry of document.sitemapindex?.sitemap ?? []) if (typeof entry.loc === 'string') pending.push(entry.loc.trim());
    } catch (error) {
      settings.signal.throwIfAborted();
      logger.debug({ source: 'web', sitemap: url, err: error }, 'web: sitemap skipped');
    }
  }
  return pages;
}

/** Breadcrumbs from the URL: the site, then each folder of the path. */
function breadcrumbsOf(url: URL): Breadcrumb[] {
  const crumbs: Breadcrumb[] = [{ entityId: `${url.origin}/`, name: url.host, entityType: 'web_path' }];
  const segments = url.pathname.split('/').filter(Boolean).slice(0, -1);
  segments.forEach((segment, index) => {
    let name = segment;
    try {
      name = decodeURIComponent(segment);
    } catch {
      // kept encoded
    }
    crumbs.push({ entityId: `${url.origin}/${segments.slice(0, index + 1).join('/')}/`, name, entityType: 'web_path' });
  });
  return crumbs;
}

function lastSegment(url: URL): string {
  const segment = url.pathname.split('/').filter(Boolean).pop();
  try {
    return segment ? decodeURIComponent(segment) : url.host;
  } catch {
    return segment ?? url.host;
  }
}

const isHtml = (contentType: string) => /^(text\/html|application\/xhtml\+xml)\b/i.test(contentType.trim());
const httpDate = (value: string | null) => {
  const date = value ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
};

/** Statuses after which a page is gone; other failures keep the last copy. */
const GONE = new Set([404, 410]);

const connector: Connector<WebConfig, null, WebCursor> = {
  shortName: 'web',
  name: 'Website',
  description:
    'A website crawled from start URLs on the same site, with depth and page limits, sitemap.xml and robots.txt (user agent "Catchment"): pages as clean text with title and headings, the URL path as breadcrumbs. Re-syncs use conditional requests (ETag / Last-Modified); pages that disappear are removed.',
  auth: { kind: 'none' },
  config,
  cursor,
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['web'],
  outputEntityDefinitions: ['WebPageEntity'],
  // The crawl stays on its start URLs' origins.
  credentialTargets: (config) => httpOrigins(config.start_urls),

  async validate({ config }, environment) {
    const settings: FetchSettings = { client: environment.webClient, signal: new AbortController().signal, timeoutMs: Math.min(config.timeout_seconds, 15) * 1000, maxBytes: config.max_page_bytes };
    for (const url of startUrls(config)) {
      try {
        const robots = await loadRobots(new URL(url).origin, settings);
        if (!robots.allowed(url)) throw new SourceConfigError('start_urls', `The robots.txt of ${new URL(url).origin} does not allow ${USER_AGENT} to read ${url}`);
        const answer = await fetchResource(url, { ...settings, accept: 'text/html, */*;q=0.8' });
        if (answer.status >= 400) throw new SourceConfigError('start_urls', `${url} answered HTTP ${answer.status}`);
      } catch (error) {
        if (error instanceof FetchFailedError) throw new SourceConfigError('start_urls', error.message);
        throw error;
      }
    }
  },

  sync({ config, cursor: stored, signal, logger, reportSkipped }, environment) {
    const next: WebCursor = { version: 1, extraction: EXTRACTION_VERSION, pages: {} };
    const previous = stored?.extraction === EXTRACTION_VERSION ? stored.pages : {};
    const skip: Skip = (url, reason, detail) => {
      logger.debug({ source: 'web', url, reason, detail }, 'web: page skipped');
      reportSkipped?.({ entityId: url, reason, ...(detail ? { detail } : {}) });
    };
    const settings = { client: environment.webClient, signal, timeoutMs: config.timeout_seconds * 1000, maxBytes: config.max_page_bytes };
    return { complete: true, items: crawl(config, previous, next, settings, logger, skip), nextCursor: () => next };
  },
};

/** Reports a URL the crawl leaves out (SyncContext.reportSkipped), by URL. */
type Skip = (url: string, reason: string, detail?: string) => void;

interface Fetched {
  url: string;
  depth: number;
  items: SourceItem[];
  links: string[];
  /** No HTTP answer, or one saying to come back later. */
  failed: string | null;
}

async function* crawl(config: WebConfig, previous: Record<string, PageState>, next: WebCursor, settings: FetchSettings, logger: Logger, skip: Skip): AsyncGenerator<SourceItem> {
  const starts = startUrls(config);
  const { signal } = settings;
  const robotsByOrigin = new Map<string, Robots>();
  for (const origin of new Set(starts.map((url) => new URL(url).origin))) robotsByOrigin.set(origin, await loadRobots(origin, settings));
  const allowed = (url: string) => robotsByOrigin.get(new URL(url).origin)?.allowed(url) ?? false;

  const queue: { url: string; depth: number }[] = [];
  const queued = new Set<string>();
  const refused = new Set<string>(); // reported once, however many pages link to them
  const enqueue = (url: string, depth: number) => {
    if (queued.has(url) || refused.has(url)) return;
    // Another site (a sitemap may list one) is outside the crawl, not something it leaves out.
    if (!robotsByOrigin.has(new URL(url).origin)) return;
    const reason = !allowed(url) ? 'disallowed by robots.txt' : queued.size >= config.max_pages ? 'beyond max_pages' : null;
    if (reason) {
      refused.add(url);
      skip(url, reason);
      return;
    }
    queued.add(url);
    queue.push({ url, depth });
  };
  for (const url of starts) enqueue(url, 0);
  if (config.use_sitemap) {
    const sitemaps = [...robotsByOrigin.entries()].flatMap(([origin, robots]) => [`${origin}/sitemap.xml`, ...robots.sitemaps]);
    for (const page of await readSitemaps(sitemaps, settings, logger)) {
      const url = normalizeUrl(page);
      if (url) enqueue(url, 0);
    }
  }

  const delayMs = Math.max(0, ...[...robotsByOrigin.values()].map((robots) => robots.delayMs));
  const parallel = delayMs > 0 ? 1 : config.concurrency;
  const indexed = new Set<string>(); // entity ids yielded or kept, so a page reached under two URLs counts once
  const startFailures: string[] = [];
  let first = true;

  while (queue.length) {
    signal.throwIfAborted();
    if (!first && delayMs > 0) await sleep(delayMs, undefined, { signal });
    first = false;
    const wave = queue.splice(0, parallel);
    const results = await Promise.all(wave.map(({ url, depth }) => fetchPage(url, depth, previous[url] ?? null, config, settings, allowed, next, logger, skip)));
    for (const result of results) {
      if (result.failed && starts.includes(result.url)) startFailures.push(result.failed);
      for (const item of result.items) {
        const id = 'keep' in item ? item.keep : 'entityId' in item ? item.entityId : item.delete;
        if (indexed.has(id)) continue;
        indexed.add(id);
        yield item;
      }
      if (result.depth < config.max_depth) for (const link of result.links) enqueue(link, result.depth + 1);
    }
  }
  // Nothing at all could be read: failing the run keeps the collection as it was (a complete run would empty it).
  if (startFailures.length === starts.length && indexed.size === 0) throw new FetchFailedError(startFailures[0]!);
  logger.debug({ source: 'web', pages: Object.keys(next.pages).length, indexed: indexed.size }, 'web: crawl finished');
}

async function fetchPage(
  url: string,
  depth: number,
  before: PageState | null,
  config: WebConfig,
  settings: FetchSettings,
  allowed: (url: string) => boolean,
  next: WebCursor,
  logger: Logger,
  skip: Skip,
): Promise<Fetched> {
  const sameSite = (link: string) => new URL(link).origin === new URL(url).origin;
  /** The last copy stands: kept, and its links still crawled. Reported only when it holds nothing indexed. */
  const keepLast = (failed: string | null, unread?: Omit<SkippedItem, 'entityId'>): Fetched => {
    const skipped = unread ?? (before?.skipped ? { reason: before.skipped } : null);
    if (skipped && !before?.entityId) skip(url, skipped.reason, skipped.detail);
    if (!before) return { url, depth, items: [], links: [], failed };
    next.pages[url] = before;
    return { url, depth, items: before.entityId ? [{ keep: before.entityId }] : [], links: before.links, failed };
  };
  const leftOut = (reason: string, detail?: string): Fetched => {
    skip(url, reason, detail);
    return { url, depth, items: [], links: [], failed: null };
  };
  let answer: FetchedResource;
  try {
    answer = await fetchResource(url, { ...settings, etag: before?.etag, lastModified: before?.lastModified, accept: 'text/html, application/xhtml+xml, */*;q=0.8' });
  } catch (error) {
    if (!(error instanceof FetchFailedError)) throw error;
    logger.debug({ source: 'web', url, reason: error.message }, 'web: page not fetched');
    return keepLast(error.message, { reason: 'unreadable', detail: error.message });
  }
  if (answer.status === 304) return keepLast(null);
  if (GONE.has(answer.status)) return leftOut('gone', `answered HTTP ${answer.status}`);
  if (answer.status >= 400) return keepLast(`${url} answered HTTP ${answer.status}`, { reason: 'unreadable', detail: `answered HTTP ${answer.status}` });
  // Redirected elsewhere: only followed within the site and where robots.txt allows.
  const finalUrl = normalizeUrl(answer.url) ?? url;
  if (!sameSite(finalUrl)) return leftOut('redirected off the site', finalUrl);
  if (!allowed(finalUrl)) return leftOut('disallowed by robots.txt', `redirected to ${finalUrl}`);
  if (answer.truncated) return leftOut('larger than max_page_bytes', `more than ${config.max_page_bytes} bytes`);

  const html = isHtml(answer.contentType);
  const outline = html ? outlinePage(answer.body.toString('utf8'), finalUrl) : null;
  const links = outline && !outline.nofollow ? outline.links.filter(sameSite) : [];
  const state: PageState = { entityId: null, etag: answer.etag, lastModified: answer.lastModified, links };
  next.pages[url] = state;
  const notIndexed = (reason: string, detail?: string): Fetched => {
    state.skipped = reason;
    skip(url, reason, detail);
    return { url, depth, items: [], links, failed: null };
  };
  if (outline?.noindex) return notIndexed('marked noindex');
  const mimeType = answer.contentType.split(';')[0]!.trim() || 'application/octet-stream';
  if (!isSupported('', mimeType)) return notIndexed('unsupported file type', mimeType);
  let extracted: Awaited<ReturnType<typeof extractText>>;
  try {
    extracted = await extractText({ name: '', bytes: answer.body, mimeType: answer.contentType || mimeType });
  } catch (error) {
    return notIndexed('text extraction failed', error instanceof Error ? error.message : String(error));
  }
  if (!extracted?.text.trim()) return notIndexed('binary content or no text');

  const location = new URL(finalUrl);
  state.entityId = finalUrl;
  const entity: SourceEntity = {
    entityId: finalUrl,
    entityType: 'web_page',
    name: outline?.title ?? lastSegment(location),
    breadcrumbs: breadcrumbsOf(location),
    createdAt: null,
    updatedAt: httpDate(answer.lastModified),
    text: extracted.text,
    fields: {
      url: finalUrl,
      title: outline?.title ?? null,
      headings: outline?.headings.map((heading) => heading.text) ?? [],
      content_type: extracted.mimeType,
      last_modified: answer.lastModified,
    },
    webUrl: finalUrl,
  };
  return { url, depth, items: [entity], links, failed: null };
}

export default connector;
