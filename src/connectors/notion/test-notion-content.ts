/**
 * Test helper: Notion content in the shapes its API answers with (rich text items, blocks by type),
 * as typed in makenotion/notion-sdk-js src/api-endpoints.ts (RichTextItemResponse, *BlockObjectResponse).
 */

export type Parent = { type: 'workspace'; workspace: true } | { type: 'page_id'; page_id: string } | { type: 'database_id'; database_id: string } | { type: 'block_id'; block_id: string };

export interface FakeBlock {
  id?: string;
  type: string;
  /** What Notion holds under the block's type key (`{ rich_text: [...] }`…). */
  content: Record<string, unknown>;
  children?: FakeBlock[];
}

/** Notion's rich text item for a plain string. */
export const text = (content: string, href: string | null = null) => ({
  type: 'text',
  text: { content, link: href ? { url: href } : null },
  annotations: { bold: false, italic: false, strikethrough: false, underline: false, code: false, color: 'default' },
  plain_text: content,
  href,
});

/** Block builders, in Notion's shapes. */
export const blocks = {
  paragraph: (content: string, children?: FakeBlock[]): FakeBlock => ({ type: 'paragraph', content: { rich_text: [text(content)], color: 'default' }, children }),
  heading: (level: 1 | 2 | 3, content: string): FakeBlock => ({ type: `heading_${level}`, content: { rich_text: [text(content)], color: 'default', is_toggleable: false } }),
  bullet: (content: string, children?: FakeBlock[]): FakeBlock => ({ type: 'bulleted_list_item', content: { rich_text: [text(content)], color: 'default' }, children }),
  numbered: (content: string): FakeBlock => ({ type: 'numbered_list_item', content: { rich_text: [text(content)], color: 'default' } }),
  todo: (content: string, checked: boolean): FakeBlock => ({ type: 'to_do', content: { rich_text: [text(content)], checked, color: 'default' } }),
  code: (content: string, language: string): FakeBlock => ({ type: 'code', content: { rich_text: [text(content)], caption: [], language } }),
  quote: (content: string): FakeBlock => ({ type: 'quote', content: { rich_text: [text(content)], color: 'default' } }),
  callout: (content: string, emoji: string): FakeBlock => ({ type: 'callout', content: { rich_text: [text(content)], icon: { type: 'emoji', emoji }, color: 'default' } }),
  toggle: (content: string, children: FakeBlock[]): FakeBlock => ({ type: 'toggle', content: { rich_text: [text(content)], color: 'default' }, children }),
  table: (rows: string[][], hasColumnHeader: boolean): FakeBlock => ({
    type: 'table',
    content: { table_width: rows[0]?.length ?? 0, has_column_header: hasColumnHeader, has_row_header: false },
    children: rows.map((cells) => ({ type: 'table_row', content: { cells: cells.map((cell) => [text(cell)]) } })),
  }),
  columns: (...columns: FakeBlock[][]): FakeBlock => ({ type: 'column_list', content: {}, children: columns.map((children) => ({ type: 'column', content: {}, children })) }),
  divider: (): FakeBlock => ({ type: 'divider', content: {} }),
};
