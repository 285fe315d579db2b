/** Test helpers: RSS 2.0 and Atom documents from a list of items. */
export interface TestFeedItem {
  id: string;
  title: string;
  html: string;
  date: Date;
  author?: string;
  /** An attached file, as `<enclosure>` (RSS) or `<link rel="enclosure">` (Atom). */
  enclosure?: { url: string; type: string; length: number };
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function rss2(title: string, link: string, items: TestFeedItem[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>
<title>${escapeXml(title)}</title><link>${link}</link><description>News of ${escapeXml(title)}</description>
${items
  .map(
    (item) => `<item><guid isPermaLink="false">${item.id}</guid><title>${escapeXml(item.title)}</title><link>${link}/${item.id}</link>
<description>${escapeXml(item.html.slice(0, 40))}</description><content:encoded><![CDATA[${item.html}]]></content:encoded>
<pubDate>${item.date.toUTCString()}</pubDate>${item.author ? `<dc:creator>${escapeXml(item.author)}</dc:creator>` : ''}<category>news</category>${item.enclosure ? `<enclosure url="${escapeXml(item.enclosure.url)}" length="${item.enclosure.length}" type="${item.enclosure.type}"/>` : ''}</item>`,
  )
  .join('\n')}
</channel></rss>`;
}

export function atom(title: string, link: string, items: TestFeedItem[]): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>${escapeXml(title)}</title><link href="${link}"/><link rel="self" href="${link}/atom.xml"/>
<id>urn:feed:${escapeXml(title)}</id><updated>2025-01-01T00:00:00Z</updated>
${items
  .map(
    (item) => `<entry><id>${item.id}</id><title type="html">${escapeXml(item.title)}</title><link rel="alternate" href="${link}/${item.id}"/>
${item.enclosure ? `<link rel="enclosure" href="${escapeXml(item.enclosure.url)}" type="${item.enclosure.type}" length="${item.enclosure.length}"/>` : ''}<published>${item.date.toISOString()}</published><updated>${item.date.toISOString()}</updated>
<summary>${escapeXml(item.html.slice(0, 40))}</summary><content type="html">${escapeXml(item.html)}</content>
${item.author ? `<author><name>${escapeXml(item.author)}</name></author>` : ''}<category term="release"/></entry>`,
  )
  .join('\n')}
</feed>`;
}
