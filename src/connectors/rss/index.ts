import { createHash } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';
import { httpOrigins, SourceConfigError, type Breadcrumb, type Connector, type SourceEntity, type SourceItem } from '../connector.js';
import { EXTRACTION_VERSION, extractText } from '../text-extraction/extract-text.js';
import { FetchFailedError, fetchResource, normalizeUrl, type WebClient } from '../../platform/http/web-client.js';

/**
 * `rss`: RSS 2.0, RSS 1.0 (RDF) and Atom feeds. Each feed is an `rss_feed` entity and the
 * breadcrumb of its items, each item an `rss_item` entity (title, link as web URL, content or
 * summary as text, published and updated dates, author).
 *
 * A feed is a window on its newest items, so an item that scrolls out of the feed is not removed:
 * runs are not `complete`. They are incremental by item id and date: the cursor remembers, per
 * feed, the validators of the last copy (a 304 keeps every item) and each item's date; an item
 * whose id and date are unchanged is a keep marker, others are read again. Items of a feed removed
 * from the config are deleted.
 *
 * What a run leaves out is reported (SyncContext.reportSkipped): items without any text, the
 * enclosures of the items it reads (by their URL), and, when several feeds are configured, a feed
 * that cannot be read (its items stay; with every feed failing the run fails instead).
 */

const config = z.strictObject({
  feed_urls: z.array(z.string()).meta({ title: 'Feed URLs', description: 'http(s) URLs of RSS or Atom feeds.' }),
  timeout_seconds: z.int().min(1).max(600).default(20).meta({ title: 'Request timeout (seconds)' }),
  max_feed_bytes: z.int().min(1).default(20 * 1024 * 1024).meta({ title: 'Largest feed (bytes)' }),
});

type RssConfig = z.infer<typeof config>;

const feedState = z.object({
  etag: z.string().nullable(),
  lastModified: z.string().nullable(),
  /** Entity id of the feed, and date (ISO, or '' when the item has none) by item entity id. */
  feedId: z.string(),
  items: z.record(z.string(), z.string()),
});

type FeedState = z.infer<typeof feedState>;

const cursor = z.object({ version: z.literal(1), extraction: z.number(), feeds: z.record(z.string(), feedState) });

export type RssCursor = z.infer<typeof cursor>;

/** A feed that answered, but not with a feed (an HTTP error, not XML, another format), with the reason its skip is reported with. */
class FeedError extends Error {
  constructor(
    message: string,
    readonly reason: 'unreadable' | 'not a feed' | 'larger than max_feed_bytes',
  ) {
    super(message);
  }
}

function feedUrls(config: RssConfig): string[] {
  if (config.feed_urls.length === 0) throw new SourceConfigError('feed_urls', 'At least one feed URL is required');
  return [
    ...new Set(
      config.feed_urls.map((text) => {
        const url = normalizeUrl(text.trim());
        if (!url || !/^https?:\/\//i.test(text.trim())) throw new SourceConfigError('feed_urls', `"${text}" is not an http:// or https:// URL without user info`);
        return url;
      }),
    ),
  ];
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  htmlEntities: true,
  isArray: (name) => ['item', 'entry', 'link', 'author', 'category', 'contributor', 'enclosure'].includes(name),
});

type Node = Record<string, unknown>;

/** Text of an element that may carry attributes (`{ '#text': …, '@_type': … }`) or be a plain string. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return textOf(value[0]);
  if (value && typeof value === 'object') return textOf((value as Node)['#text']);
  return '';
}

async function htmlText(html: string): Promise<string> {
  if (!/[<&]/.test(html)) return html.trim();
  return (await extractText({ name: '', bytes: Buffer.from(html, 'utf8'), mimeType: 'text/html' }))?.text ?? '';
}

function dateOf(...values: unknown[]): Date | null {
  for (const value of values) {
    const text = textOf(value);
    const date = text ? new Date(text) : null;
    if (date && !Number.isNaN(date.getTime())) return date;
  }
  return null;
}

interface ParsedItem {
  key: string;
  title: string;
  link: string | null;
  html: string;
  summary: string;
  published: Date | null;
  updated: Date | null;
  authors: string[];
  categories: string[];
  /** Attached files (podcast audio, PDFs…): not read, reported as left out. */
  enclosures: Enclosure[];
}

interface Enclosure {
  url: string;
  type: string | null;
  length: number | null;
}

interface ParsedFeed {
  format: 'rss' | 'atom';
  title: string;
  link: string | null;
  description: string;
  items: ParsedItem[];
}

/** Atom's `<link rel="alternate" href>` (rel absent means alternate), or RSS's text link. */
function linkOf(links: unknown, base: string): string | null {
  for (const link of (links as unknown[] | undefined) ?? []) {
    if (typeof link === 'string') return normalizeUrl(link.trim(), base);
    const node = link as Node;
    const rel = (node['@_rel'] as string | undefined) ?? 'alternate';
    if (rel === 'alternate' && typeof node['@_href'] === 'string') return normalizeUrl(node['@_href'], base);
  }
  return null;
}

/** RSS's `<enclosure url type length>` and Atom's `<link rel="enclosure" href type length>`. */
function enclosuresOf(nodes: unknown, urlAttribute: '@_url' | '@_href', base: string): Enclosure[] {
  return ((nodes as Node[] | undefined) ?? []).flatMap((node) => {
    if (!node || typeof node !== 'object' || (urlAttribute === '@_href' && node['@_rel'] !== 'enclosure')) return [];
    const url = typeof node[urlAttribute] === 'string' ? normalizeUrl(node[urlAttribute].trim(), base) : null;
    const length = Number(node['@_length']);
    return url ? [{ url, type: typeof node['@_type'] === 'string' ? node['@_type'] : null, length: Number.isFinite(length) && length > 0 ? length : null }] : [];
  });
}

const authorsOf = (...lists: unknown[]) => lists.flatMap((list) => (Array.isArray(list) ? list : list == null ? [] : [list]).map((author) => (author && typeof author === 'object' && 'name' in author ? textOf((author as Node).name) : textOf(author)))).filter(Boolean);

/** An item's stable key: its guid / id, else its link, else a hash of what it says. */
function keyOf(id: string, link: string | null, title: string, date: Date | null): string {
  return id || link || `sha256:${createHash('sha256').update(`${title}\n${date?.toISOString() ?? ''}`).digest('hex')}`;
}

function parseFeed(xml: string, feedUrl: string): ParsedFeed {
  let document: Node;
  try {
    document = parser.parse(xml) as Node;
  } catch (error) {
    throw new FeedError(`${feedUrl} is not a well-formed feed: ${(error as Error).message}`, 'not a feed');
  }
  const atom = document.feed as Node | undefined;
  if (atom) {
    return {
      format: 'atom',
      title: textOf(atom.title),
      link: linkOf(atom.link, feedUrl),
      description: textOf(atom.subtitle),
      items: ((atom.entry as Node[] | undefined) ?? []).map((entry) => {
        const link = linkOf(entry.link, feedUrl);
        const title = textOf(entry.title);
        const updated = dateOf(entry.updated, entry.published);
        return {
          key: keyOf(textOf(entry.id), link, title, updated),
          title,
          link,
          html: textOf(entry.content) || textOf(entry.summary),
          summary: textOf(entry.summary),
          published: dateOf(entry.published, entry.updated),
          updated,
          authors: authorsOf(entry.author ?? atom.author),
          categories: ((entry.category as Node[] | undefined) ?? []).map((category) => String(category['@_term'] ?? textOf(category))).filter(Boolean),
          enclosures: enclosuresOf(entry.link, '@_href', feedUrl),
        };
      }),
    };
  }
  const channel = ((document.rss as Node | undefined)?.channel ?? (document.RDF as Node | undefined)?.channel) as Node | undefined;
  if (!channel) throw new FeedError(`${feedUrl} is neither an RSS nor an Atom feed`, 'not a feed');
  // RSS 1.0 keeps its items beside the channel, RSS 2.0 inside it.
  const items = ((channel.item ?? (document.RDF as Node | undefined)?.item) as Node[] | undefined) ?? [];
  return {
    format: 'rss',
    title: textOf(channel.title),
    link: linkOf(channel.link, feedUrl),
    description: textOf(channel.description),
    items: items.map((item) => {
      const link = linkOf(item.link, feedUrl);
      const title = textOf(item.title);
      const published = dateOf(item.pubDate, item.date);
      const updated = dateOf(item.updated, item.modified, item.pubDate, item.date);
      return {
        key: keyOf(textOf(item.guid) || String((item as Node)['@_about'] ?? ''), link, title, updated),
        title,
        link,
        html: textOf(item.encoded) || textOf(item.description),
        summary: textOf(item.description),
        published,
        updated,
        authors: authorsOf(item.author, item.creator),
        categories: ((item.category as unknown[] | undefined) ?? []).map(textOf).filter(Boolean),
        enclosures: enclosuresOf(item.enclosure, '@_url', feedUrl),
      };
    }),
  };
}

async function fetchFeed(url: string, config: RssConfig, client: WebClient, signal: AbortSignal, before: FeedState | null) {
  const answer = await fetchResource(url, {
    client,
    signal,
    timeoutMs: config.timeout_seconds * 1000,
    maxBytes: config.max_feed_bytes,
    etag: before?.etag,
    lastModified: before?.lastModified,
    accept: 'application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5',
  });
  if (answer.status === 304) {
    if (!before) throw new FeedError(`${url} answered 304 Not Modified to an unconditional request`, 'unreadable');
    return { answer, feed: null, before };
  }
  if (answer.status >= 400) throw new FeedError(`${url} answered HTTP ${answer.status}`, 'unreadable');
  if (answer.truncated) throw new FeedError(`${url} is larger than max_feed_bytes (${config.max_feed_bytes})`, 'larger than max_feed_bytes');
  return { answer, feed: parseFeed(answer.body.toString('utf8'), url), before };
}

const connector: Connector<RssConfig, null, RssCursor> = {
  shortName: 'rss',
  name: 'RSS / Atom feeds',
  description:
    'One or more RSS 2.0, RSS 1.0 or Atom feeds: each item with its title, link, content or summary, dates and author. Incremental by item id and date, with conditional requests; items that scroll out of a feed stay searchable.',
  auth: { kind: 'none' },
  config,
  cursor,
  supportedAuthProviders: [],
  supportsContinuous: true,
  federatedSearch: false,
  labels: ['web', 'news'],
  outputEntityDefinitions: ['RssFeedEntity', 'RssItemEntity'],
  credentialTargets: (config) => httpOrigins(config.feed_urls),

  async validate({ config }, environment) {
    for (const url of feedUrls(config)) {
      try {
        await fetchFeed(url, { ...config, timeout_seconds: Math.min(config.timeout_seconds, 15) }, environment.webClient, new AbortController().signal, null);
      } catch (error) {
        if (error instanceof FetchFailedError || error instanceof FeedError) throw new SourceConfigError('feed_urls', error.message);
        throw error;
      }
    }
  },

  sync({ config, cursor: stored, signal, reportSkipped }, environment) {
    const next: RssCursor = { version: 1, extraction: EXTRACTION_VERSION, feeds: {} };
    const previous = stored?.extraction === EXTRACTION_VERSION ? stored.feeds : {};
    const skip: Skip = (entityId, reason, detail) => reportSkipped?.({ entityId, reason, ...(detail ? { detail } : {}) });
    async function* items(): AsyncGenerator<SourceItem> {
      const urls = feedUrls(config);
      const failed: { url: string; error: FetchFailedError | FeedError }[] = [];
      for (const url of urls) {
        signal.throwIfAborted();
        const before = previous[url] ?? null;
        let fetched: Awaited<ReturnType<typeof fetchFeed>>;
        try {
          fetched = await fetchFeed(url, config, environment.webClient, signal, before);
        } catch (error) {
          if (!(error instanceof FetchFailedError || error instanceof FeedError)) throw error;
          failed.push({ url, error });
          // Its items stay, and are known to the next run.
          if (before) next.feeds[url] = before;
          continue;
        }
        yield* readFeed(url, fetched, signal, skip, (state) => (next.feeds[url] = state));
      }
      // No feed read at all fails the run; one of several is left out, and the others are read.
      if (failed.length === urls.length) throw failed[0]!.error;
      for (const { url, error } of failed) skip(url, error instanceof FeedError ? error.reason : 'unreadable', error.message);
      // Feeds dropped from the config take their items with them.
      for (const [url, state] of Object.entries(previous)) {
        if (urls.includes(url)) continue;
        for (const id of Object.keys(state.items)) yield { delete: id };
        yield { delete: state.feedId };
      }
    }
    return { complete: false, items: items(), nextCursor: () => next };
  },
};

/** Reports an item the run leaves out (SyncContext.reportSkipped). */
type Skip = (entityId: string, reason: string, detail?: string) => void;

async function* readFeed(url: string, fetched: Awaited<ReturnType<typeof fetchFeed>>, signal: AbortSignal, skip: Skip, done: (state: FeedState) => void): AsyncGenerator<SourceItem> {
  const { answer, feed, before } = fetched;
  if (!feed) {
    // 304: nothing new since the last copy.
    done(fetched.before);
    yield { keep: fetched.before.feedId };
    for (const id of Object.keys(fetched.before.items)) yield { keep: id };
    return;
  }
  const feedId = url;
  const title = feed.title || new URL(url).host;
  const crumb: Breadcrumb = { entityId: feedId, name: title, entityType: 'rss_feed' };
  // Items already known are carried over: the feed is a window, and they stay in the collection.
  const state: FeedState = { etag: answer.etag, lastModified: answer.lastModified, feedId, items: { ...(before?.items ?? {}) } };
  yield {
    ...crumb,
    breadcrumbs: [],
    createdAt: null,
    updatedAt: null,
    text: [title, feed.description].filter(Boolean).join('\n\n'),
    fields: { feed_url: url, format: feed.format, title, link: feed.link, description: feed.description || null },
    webUrl: feed.link ?? url,
  } satisfies SourceEntity;
  const seen = new Set<string>();
  for (const item of feed.items) {
    signal.throwIfAborted();
    if (seen.has(item.key)) continue;
    seen.add(item.key);
    const date = (item.updated ?? item.published)?.toISOString() ?? '';
    if (before && before.items[item.key] === date) {
      yield { keep: item.key };
      continue;
    }
    const text = await htmlText(item.html);
    const titleText = await htmlText(item.title);
    if (!text && !titleText) {
      // Not remembered: read and reported again whenever the feed is read with it.
      skip(item.key, 'no text');
      continue;
    }
    state.items[item.key] = date;
    for (const enclosure of item.enclosures) skip(enclosure.url, 'enclosure not read', [enclosure.type, enclosure.length === null ? null : `${enclosure.length} bytes`].filter(Boolean).join(', '));
    const itemTitle = titleText || item.link || item.key;
    yield {
      entityId: item.key,
      entityType: 'rss_item',
      name: itemTitle,
      breadcrumbs: [crumb],
      createdAt: item.published,
      updatedAt: item.updated,
      text: [itemTitle, text].filter(Boolean).join('\n\n'),
      fields: {
        feed_url: url,
        feed_title: title,
        link: item.link,
        summary: item.summary ? await htmlText(item.summary) : null,
        authors: item.authors,
        categories: item.categories,
        published_at: item.published?.toISOString() ?? null,
        updated_at: item.updated?.toISOString() ?? null,
      },
      webUrl: item.link ?? url,
    };
  }
  done(state);
}

export default connector;
