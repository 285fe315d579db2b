import { describe, expect, test } from '@jest/globals';
import type { Block } from './notion-api.js';
import { type BlockNode, propertyText, renderBlocks } from './render.js';
import { text } from './test-notion-content.js';

const node = (type: string, content: Record<string, unknown>, children: BlockNode[] = []): BlockNode => ({
  block: { object: 'block', id: `${type}-1`, type, has_children: children.length > 0, archived: false, in_trash: false, [type]: content } as Block,
  children,
});
const noTitles = () => null;

describe('Notion property values as text', () => {
  test.each([
    ['status', { type: 'status', status: { id: '1', name: 'In progress', color: 'blue' } }, 'In progress'],
    ['date range', { type: 'date', date: { start: '2025-03-01', end: '2025-03-05', time_zone: null } }, '2025-03-01 → 2025-03-05'],
    ['empty date', { type: 'date', date: null }, ''],
    ['people', { type: 'people', people: [{ object: 'user', id: 'u1', name: 'Ada' }, { object: 'user', id: 'u2' }] }, 'Ada, u2'],
    ['files', { type: 'files', files: [{ name: 'spec.pdf', type: 'file', file: { url: 'https://files.example/spec.pdf', expiry_time: '2025-01-01T00:00:00.000Z' } }] }, 'spec.pdf'],
    ['unique id', { type: 'unique_id', unique_id: { prefix: 'ENG', number: 42 } }, 'ENG-42'],
    ['number formula', { type: 'formula', formula: { type: 'number', number: 7.5 } }, '7.5'],
    ['string formula', { type: 'formula', formula: { type: 'string', string: 'late' } }, 'late'],
    ['rollup of an array', { type: 'rollup', rollup: { type: 'array', array: [{ type: 'title', title: [text('Alpha')] }, { type: 'number', number: 2 }], function: 'show_original' } }, 'Alpha, 2'],
    ['unchecked checkbox', { type: 'checkbox', checkbox: false }, 'No'],
    ['a type this does not know', { type: 'button', button: {} }, ''],
  ])('%s', (_, property, expected) => {
    expect(propertyText(property, noTitles)).toBe(expected);
  });

  test('relations name the related pages the run knows, and show the ids of the others', () => {
    const titles = new Map([['p1', 'Runbooks']]);
    expect(propertyText({ type: 'relation', relation: [{ id: 'p1' }, { id: 'p2' }] }, (id) => titles.get(id) ?? null)).toBe('Runbooks, p2');
  });
});

describe('Notion blocks as Markdown', () => {
  test('numbering restarts after another block, and list items sit one per line', () => {
    const item = (content: string) => node('numbered_list_item', { rich_text: [text(content)] });
    expect(renderBlocks([item('a'), item('b'), node('paragraph', { rich_text: [text('between')] }), item('c')])).toBe('1. a\n2. b\n\nbetween\n\n1. c');
  });

  test('links, equations, bookmarks, callouts without an icon and quotes with children', () => {
    const rendered = renderBlocks([
      node('paragraph', { rich_text: [text('See '), text('the guide', 'https://example.com/guide')] }),
      node('equation', { expression: 'e=mc^2' }),
      node('bookmark', { url: 'https://example.com', caption: [text('Example')] }),
      node('callout', { rich_text: [text('Heads up')], icon: null }),
      node('quote', { rich_text: [text('Said once')] }, [node('paragraph', { rich_text: [text('and again')] })]),
      node('code', { rich_text: [text('plain')], caption: [], language: 'plain text' }),
    ]);
    expect(rendered).toBe(['See [the guide](https://example.com/guide)', '$$e=mc^2$$', 'Example https://example.com', '> Heads up', '> Said once\n>   and again', '```\nplain\n```'].join('\n\n'));
  });

  test('child pages, databases and dividers say nothing; a block type added later still gives its text', () => {
    expect(renderBlocks([node('child_page', { title: 'Sub' }), node('divider', {}), node('heading_4', { rich_text: [text('Future')] })])).toBe('Future');
  });
});
