import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Test helper: the protocol pieces of the fake Drive API (test-google-drive-server.ts): query terms,
 * page tokens, partial responses (`fields`) and Google's error bodies, with the sources named there.
 */

/** What query terms look at. */
interface QueriedItem {
  mimeType: string;
  trashed: boolean;
  parents?: string[];
}

/** The fields Google returns without a `fields` parameter. */
export const FILE_DEFAULT = { kind: true, id: true, name: true, mimeType: true } as const;
export const DRIVE_DEFAULT = { kind: true, id: true, name: true } as const;

/** The conjunction of query terms the connector sends (see ref-search-terms); null for anything else. */
export function matcherOf(q: string): ((item: QueriedItem) => boolean) | null {
  if (q.trim() === '') return () => true;
  const terms = q.split(/\s+and\s+/i).map((term) => term.trim());
  const tests: ((item: QueriedItem) => boolean)[] = [];
  for (const term of terms) {
    let match: RegExpExecArray | null;
    if ((match = /^trashed\s*=\s*(true|false)$/.exec(term))) {
      const trashed = match[1] === 'true';
      tests.push((item) => item.trashed === trashed);
    } else if ((match = /^mimeType\s*(=|!=)\s*'([^']*)'$/.exec(term))) {
      const [, operator, value] = match;
      tests.push((item) => (item.mimeType === value) === (operator === '='));
    } else if ((match = /^'([^']*)'\s+in\s+parents$/.exec(term))) {
      const parent = match[1]!;
      tests.push((item) => item.parents?.includes(parent) ?? false);
    } else return null;
  }
  return (item) => tests.every((test) => test(item));
}

/** Offset pagination behind opaque tokens bound to the listing they belong to. */
export function paginate<T>(items: T[], params: URLSearchParams, defaultSize: number, maxSize: number, listing: string) {
  const pageSize = Math.max(1, Math.min(maxSize, Number(params.get('pageSize') ?? defaultSize)));
  let offset = 0;
  const token = params.get('pageToken');
  if (token) {
    try {
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { offset: number; listing: string };
      if (decoded.listing !== listing) return null;
      offset = decoded.offset;
    } catch {
      return null;
    }
  }
  const next = offset + pageSize;
  return { items: items.slice(offset, next), nextPageToken: next < items.length ? Buffer.from(JSON.stringify({ offset: next, listing })).toString('base64url') : null };
}

type FieldTree = { [name: string]: true | FieldTree };

/** Google's `fields` syntax: names separated by commas, sub-selections in parentheses. */
function parseFields(fields: string): FieldTree {
  let position = 0;
  const level = (): FieldTree => {
    const tree: FieldTree = {};
    while (position < fields.length) {
      const name = /^[A-Za-z_*][\w*]*/.exec(fields.slice(position))?.[0];
      if (!name) throw new Error(`bad fields selector at ${position}: ${fields}`);
      position += name.length;
      if (fields[position] === '(') {
        position++;
        tree[name] = level();
        position++; // ')'
      } else tree[name] = true;
      if (fields[position] === ',') position++;
      else break;
    }
    return tree;
  };
  return level();
}

/** A partial response: only the selected fields (`*` for all), or the method's default set. */
export function select(value: unknown, fields: string | null, defaults: FieldTree): unknown {
  return pick(value, fields ? parseFields(fields.replace(/\s+/g, '')) : defaults);
}

function pick(value: unknown, tree: FieldTree | true): unknown {
  if (tree === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((element) => pick(element, tree));
  if (tree['*']) return value;
  const result: Record<string, unknown> = {};
  for (const [name, sub] of Object.entries(tree)) {
    const field = (value as Record<string, unknown>)[name];
    if (field !== undefined) result[name] = pick(field, sub);
  }
  return result;
}

export function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  response.end(JSON.stringify(body));
}

export function googleError(
  response: ServerResponse,
  status: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
  extra: { status?: string; location?: string; locationType?: string } = {},
): void {
  const domain = /RateLimit|Limit/.test(reason) ? 'usageLimits' : 'global';
  const { status: statusName, ...location } = extra;
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  json(response, status, { error: { code: status, message, errors: [{ message, domain, reason, ...location }], ...(statusName ? { status: statusName } : {}) } });
}

export function fileNotFound(response: ServerResponse, id: string): void {
  googleError(response, 404, 'notFound', `File not found: ${id}.`, {}, { location: 'fileId', locationType: 'parameter' });
}

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}
