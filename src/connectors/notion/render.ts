import { z } from 'zod';
import { type Block, type Database, type Page, type PropertySchema, type PropertyValue, RichText } from './notion-api.js';

/**
 * Notion content as the text an agent reads: blocks as Markdown (headings `#`, lists, to-dos, code,
 * quotes, callouts, toggles, tables), a row's properties as `Name: value` lines, a database's
 * properties schema. Child pages and databases are entities of their own and are not inlined.
 */

/** A block with its children, as read by the sync (children of child pages and databases are not read). */
export interface BlockNode {
  block: Block;
  children: BlockNode[];
}

const RichTextList = z.array(RichText).catch([]);

/** Plain text of rich text, links kept as Markdown links. */
export function richText(items: unknown): string {
  return RichTextList.parse(items)
    .map((item) => (item.href && item.plain_text.trim() && item.href !== item.plain_text ? `[${item.plain_text}](${item.href})` : item.plain_text))
    .join('');
}

const TextPayload = z.looseObject({ rich_text: z.unknown().optional(), checked: z.boolean().optional(), language: z.string().optional(), caption: z.unknown().optional() });
const UrlPayload = z.looseObject({ url: z.string().optional(), caption: z.unknown().optional() });
const FilePayload = z.looseObject({ caption: z.unknown().optional(), name: z.string().optional() });
const TablePayload = z.looseObject({ has_column_header: z.boolean().default(false) });
const TableRowPayload = z.looseObject({ cells: z.array(z.unknown()).default([]) });
const EquationPayload = z.looseObject({ expression: z.string().default('') });
const CalloutIcon = z.looseObject({ icon: z.looseObject({ emoji: z.string().optional() }).nullish() });

/** The content under the block's type key; a content that does not parse reads as empty (every field of these schemas is optional). */
function payloadOf<T extends z.ZodType>(block: Block, schema: T): z.infer<T> {
  const parsed = schema.safeParse(block[block.type] ?? {});
  return parsed.success ? parsed.data : schema.parse({});
}

const HEADINGS: Record<string, string> = { heading_1: '#', heading_2: '##', heading_3: '###' };
/** Blocks that only arrange or point elsewhere: their children (if any) are rendered, they say nothing themselves. */
const CONTAINERS = new Set(['column_list', 'column', 'synced_block', 'template']);
/** Blocks with no text of their own for an agent, or another entity's content. */
const SILENT = new Set(['child_page', 'child_database', 'divider', 'table_of_contents', 'breadcrumb', 'link_to_page', 'unsupported']);

const indent = (text: string, prefix: string) => text.split('\n').map((line) => (line ? prefix + line : line)).join('\n');

const LIST_ITEMS = new Set(['bulleted_list_item', 'numbered_list_item', 'to_do']);

/** Renders blocks as Markdown, a blank line between blocks (one line break inside a list); nested blocks are indented. */
export function renderBlocks(nodes: BlockNode[]): string {
  let rendered = '';
  let number = 0;
  let previousType: string | null = null;
  for (const node of nodes) {
    number = node.block.type === 'numbered_list_item' ? number + 1 : 0;
    const text = renderBlock(node, number);
    if (!text.trim()) continue;
    const sameList = previousType !== null && LIST_ITEMS.has(node.block.type) && LIST_ITEMS.has(previousType);
    rendered += (rendered ? (sameList ? '\n' : '\n\n') : '') + text;
    previousType = node.block.type;
  }
  return rendered;
}

function renderBlock({ block, children }: BlockNode, number: number): string {
  const nested = renderBlocks(children);
  if (CONTAINERS.has(block.type)) return nested;
  if (SILENT.has(block.type)) return '';
  const withChildren = (line: string) => (nested ? `${line}\n${indent(nested, '  ')}` : line);
  const heading = HEADINGS[block.type];
  if (heading) return withChildren(`${heading} ${richText(payloadOf(block, TextPayload).rich_text)}`);
  switch (block.type) {
    case 'paragraph':
      return withChildren(richText(payloadOf(block, TextPayload).rich_text));
    case 'bulleted_list_item':
    case 'toggle':
      return withChildren(`- ${richText(payloadOf(block, TextPayload).rich_text)}`);
    case 'numbered_list_item':
      return withChildren(`${number}. ${richText(payloadOf(block, TextPayload).rich_text)}`);
    case 'to_do': {
      const payload = payloadOf(block, TextPayload);
      return withChildren(`- [${payload.checked ? 'x' : ' '}] ${richText(payload.rich_text)}`);
    }
    case 'quote':
      return indent(withChildren(richText(payloadOf(block, TextPayload).rich_text)), '> ');
    case 'callout': {
      const emoji = payloadOf(block, CalloutIcon).icon?.emoji;
      return indent(withChildren(`${emoji ? `${emoji} ` : ''}${richText(payloadOf(block, TextPayload).rich_text)}`), '> ');
    }
    case 'code': {
      const payload = payloadOf(block, TextPayload);
      const caption = richText(payload.caption);
      return `\`\`\`${payload.language && payload.language !== 'plain text' ? payload.language : ''}\n${richText(payload.rich_text)}\n\`\`\`${caption ? `\n${caption}` : ''}`;
    }
    case 'equation':
      return `$$${payloadOf(block, EquationPayload).expression}$$`;
    case 'table':
      return renderTable(children, payloadOf(block, TablePayload).has_column_header);
    case 'bookmark':
    case 'embed':
    case 'link_preview': {
      const payload = payloadOf(block, UrlPayload);
      const caption = richText(payload.caption);
      return [caption, payload.url].filter(Boolean).join(' ');
    }
    case 'image':
    case 'video':
    case 'audio':
    case 'file':
    case 'pdf': {
      const payload = payloadOf(block, FilePayload);
      return richText(payload.caption) || payload.name || '';
    }
    default:
      // A block type added after this was written: its text, when it has the usual rich_text.
      return withChildren(richText(payloadOf(block, TextPayload).rich_text));
  }
}

function renderTable(rows: BlockNode[], hasColumnHeader: boolean): string {
  const lines = rows.filter((row) => row.block.type === 'table_row').map((row) => `| ${payloadOf(row.block, TableRowPayload).cells.map((cell) => richText(cell).replace(/\|/g, '\\|')).join(' | ')} |`);
  if (hasColumnHeader && lines.length > 0) {
    const width = payloadOf(rows[0]!.block, TableRowPayload).cells.length;
    lines.splice(1, 0, `|${' --- |'.repeat(width)}`);
  }
  return lines.join('\n');
}

const Named = z.looseObject({ name: z.string().nullish(), id: z.string().optional() });
const DateValue = z.looseObject({ start: z.string(), end: z.string().nullish() }).nullish();
const FileValue = z.looseObject({ name: z.string().optional() });
const UniqueId = z.looseObject({ prefix: z.string().nullish(), number: z.number().nullish() });
const Typed = z.looseObject({ type: z.string() });

/** A page's title: the text of its `title` property (every page has exactly one). */
export function pageTitle(page: Page): string {
  const title = Object.values(page.properties).find((property) => property.type === 'title') as PropertyValue | undefined;
  return title ? richText(title.title).trim() : '';
}

export const databaseTitle = (database: Database) => richText(database.title).trim();

/**
 * A property value as text, or '' when empty. `titleOf` names related pages when the run knows
 * them (relations otherwise show their ids).
 */
export function propertyText(property: Record<string, unknown> & { type: string }, titleOf: (id: string) => string | null): string {
  const value = property[property.type];
  switch (property.type) {
    case 'title':
    case 'rich_text':
      return richText(value);
    case 'number':
      return typeof value === 'number' ? String(value) : '';
    case 'checkbox':
      return value === true ? 'Yes' : 'No';
    case 'select':
    case 'status':
      return Named.nullish().catch(null).parse(value)?.name ?? '';
    case 'multi_select':
      return z.array(Named).catch([]).parse(value).map((option) => option.name ?? '').filter(Boolean).join(', ');
    case 'people':
    case 'created_by':
    case 'last_edited_by':
      return (Array.isArray(value) ? value : [value]).map((user) => Named.catch({}).parse(user ?? {})).map((user) => user.name ?? user.id ?? '').filter(Boolean).join(', ');
    case 'date': {
      const date = DateValue.catch(null).parse(value);
      return date ? (date.end ? `${date.start} → ${date.end}` : date.start) : '';
    }
    case 'files':
      return z.array(FileValue).catch([]).parse(value).map((file) => file.name ?? '').filter(Boolean).join(', ');
    case 'relation':
      return z.array(z.looseObject({ id: z.string() })).catch([]).parse(value).map(({ id }) => titleOf(id) ?? id).join(', ');
    case 'unique_id': {
      const unique = UniqueId.catch({}).parse(value ?? {});
      return unique.number == null ? '' : unique.prefix ? `${unique.prefix}-${unique.number}` : String(unique.number);
    }
    case 'formula':
    case 'rollup': {
      // Typed results: { type: 'number', number: 3 }, { type: 'array', array: [property values] }…
      const result = Typed.safeParse(value);
      if (!result.success) return '';
      if (result.data.type === 'array' && Array.isArray(result.data.array)) {
        return result.data.array.map((item) => (Typed.safeParse(item).success ? propertyText(item as { type: string }, titleOf) : '')).filter(Boolean).join(', ');
      }
      return propertyText(result.data, titleOf);
    }
    case 'url':
    case 'email':
    case 'phone_number':
    case 'string':
    case 'created_time':
    case 'last_edited_time':
      return typeof value === 'string' ? value : '';
    case 'boolean':
      return value === true ? 'Yes' : value === false ? 'No' : '';
    default:
      return '';
  }
}

/** A row's properties as `Name: value` lines, the title first, empty values left out. */
export function propertyLines(page: Page, titleOf: (id: string) => string | null): string[] {
  return Object.entries(page.properties)
    .sort(([, a], [, b]) => Number(b.type === 'title') - Number(a.type === 'title'))
    .map(([name, property]) => [name, propertyText(property as PropertyValue, titleOf).trim()] as const)
    .filter(([, text]) => text)
    .map(([name, text]) => `${name}: ${text}`);
}

const Options = z.looseObject({ options: z.array(Named).default([]) });

/** A database's properties schema as lines: `- Name (type): option, option`. */
export function schemaLines(database: Database): string[] {
  return Object.values(database.properties).map((property: PropertySchema) => {
    const options = ['select', 'multi_select', 'status'].includes(property.type) ? Options.catch({ options: [] }).parse(property[property.type] ?? {}).options.map((option) => option.name ?? '') : [];
    return `- ${property.name} (${property.type})${options.length ? `: ${options.join(', ')}` : ''}`;
  });
}
