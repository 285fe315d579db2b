import { describe, expect, test } from '@jest/globals';
import { z } from 'zod';
import type { Connector } from '../connector.js';
import type { OAuth2Spec } from './auth.js';
import { describeSchema, nonBlankString, parseConfig, parseCredentials, parseCursor } from './schemas.js';

const config = z.strictObject({
  path: nonBlankString().meta({ title: 'Path', description: 'Where to read.' }),
  count: z.int().min(1).max(100).default(10).meta({ title: 'Count' }),
  ratio: z.number().optional(),
  mode: z.enum(['a', 'b']).optional().meta({ title: 'Mode' }),
  globs: z.array(z.string()).default(['**/*']),
  options: z.record(z.string(), z.string()).optional(),
  fail_after: z.int().min(0).nullable().default(null),
});

const credentials = z.strictObject({ username: z.string(), password: z.string().meta({ title: 'Password', secret: true }) });

const base = { shortName: 'example', config, cursor: z.strictObject({ seen: z.int() }) } as Pick<Connector, 'shortName' | 'config' | 'cursor'>;
const withAuth = (auth: Connector['auth']) => ({ ...base, auth }) as Connector;

describe('parseConfig', () => {
  test('valid values get their defaults, a fresh copy each time; absent config and top-level nulls count as absent', () => {
    const first = parseConfig(withAuth({ kind: 'none' }), { path: '/data', mode: null });
    expect(first).toEqual({ value: { path: '/data', count: 10, globs: ['**/*'], fail_after: null }, issues: [] });
    first.value.globs.push('x');
    expect(parseConfig(withAuth({ kind: 'none' }), { path: '/data' }).value.globs).toEqual(['**/*']);
    expect(parseConfig(withAuth({ kind: 'none' }), null).issues).toEqual([{ loc: ['config', 'path'], msg: 'Field required', type: 'missing' }]);
  });

  test('every kind of problem is reported at its location with the contract types', () => {
    const { issues } = parseConfig(withAuth({ kind: 'none' }), { count: 0, mode: 'c', globs: ['ok', 3], extra: true, ratio: 'x', options: [] });
    expect(issues).toEqual(
      expect.arrayContaining([
        { loc: ['config', 'extra'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
        { loc: ['config', 'path'], msg: 'Field required', type: 'missing' },
        { loc: ['config', 'count'], msg: 'Input should be greater than or equal to 1', type: 'greater_than_equal' },
        { loc: ['config', 'mode'], msg: 'Input should be one of a, b', type: 'enum' },
        { loc: ['config', 'globs', 1], msg: 'Input should be of type string', type: 'string_type' },
        { loc: ['config', 'ratio'], msg: 'Input should be of type number', type: 'float_type' },
        { loc: ['config', 'options'], msg: 'Input should be of type object', type: 'dict_type' },
      ]),
    );
    expect(issues).toHaveLength(7);
    const typeOf = (value: Record<string, unknown>) => parseConfig(withAuth({ kind: 'none' }), { path: '/data', ...value }, ['body', 'config']).issues;
    expect(typeOf({ count: 101 })).toEqual([{ loc: ['body', 'config', 'count'], msg: 'Input should be less than or equal to 100', type: 'less_than_equal' }]);
    expect(typeOf({ count: '3' })).toEqual([{ loc: ['body', 'config', 'count'], msg: 'Input should be of type integer', type: 'int_type' }]);
    expect(typeOf({ count: 2.5 })).toEqual([expect.objectContaining({ type: 'int_type' })]);
    expect(typeOf({ globs: 'x' })).toEqual([expect.objectContaining({ type: 'list_type' })]);
    expect(typeOf({ path: 5 })).toEqual([expect.objectContaining({ loc: ['body', 'config', 'path'], type: 'string_type' })]);
    expect(typeOf({ path: '  ' })).toEqual([{ loc: ['body', 'config', 'path'], msg: 'String should not be empty', type: 'string_too_short' }]);
    expect(parseConfig(withAuth({ kind: 'none' }), 'text').issues).toEqual([{ loc: ['config'], msg: 'Input should be of type object', type: 'dict_type' }]);
  });
});

describe('parseCredentials', () => {
  test('fields parse with their schema at authentication.credentials; sources without credentials take none', () => {
    const fields = withAuth({ kind: 'fields', credentials });
    expect(parseCredentials(fields, { username: 'u', password: 'p' })).toEqual({ value: { username: 'u', password: 'p' }, issues: [] });
    expect(parseCredentials(fields, { username: 'u', password: 1 }).issues).toEqual([{ loc: ['authentication', 'credentials', 'password'], msg: 'Input should be of type string', type: 'string_type' }]);
    expect(parseCredentials(withAuth({ kind: 'none' }), { token: 'x' })).toEqual({ value: null, issues: [] });
  });

  test('an OAuth source parses the token pasted instead with its pasted schema, and has none without one', () => {
    const oauth: OAuth2Spec = { authorizeUrl: () => 'https://example.com/authorize', tokenUrl: () => 'https://example.com/token', scopes: [], pkce: true, refresh: 'none', clientAuthentication: 'body' };
    const pasted = withAuth({ kind: 'oauth2', oauth, pasted: { credentials: z.strictObject({ token: nonBlankString() }), token: (value: { token: string }) => value.token } });
    expect(parseCredentials(pasted, { token: 'abc' }).value).toEqual({ token: 'abc' });
    expect(parseCredentials(pasted, {}).issues).toEqual([{ loc: ['authentication', 'credentials', 'token'], msg: 'Field required', type: 'missing' }]);
    expect(parseCredentials(withAuth({ kind: 'oauth2', oauth }), { token: 'abc' })).toEqual({ value: null, issues: [] });
  });
});

test('a stored cursor that no longer parses, or none, is a full sync (null)', () => {
  const connector = withAuth({ kind: 'none' });
  expect(parseCursor(connector, { seen: 3 })).toEqual({ seen: 3 });
  expect(parseCursor(connector, { seen: 'three' })).toBeNull();
  expect(parseCursor(connector, { seen: 3, other: 1 })).toBeNull();
  expect(parseCursor(connector, null)).toBeNull();
  expect(parseCursor({ ...connector, cursor: undefined }, { seen: 3 })).toBeNull();
});

test('the catalog fields are derived from the schema: titles, descriptions, secrets, defaults, enums and item types', () => {
  const { fields } = describeSchema(config);
  expect(fields.map((field) => field.name)).toEqual(['path', 'count', 'ratio', 'mode', 'globs', 'options', 'fail_after']);
  const byName = Object.fromEntries(fields.map((field) => [field.name, field]));
  expect(byName.path).toEqual({ name: 'path', title: 'Path', description: 'Where to read.', type: 'string', required: true, itemsType: null, isSecret: false, enumValues: null, default: null });
  expect(byName.count).toMatchObject({ title: 'Count', type: 'integer', required: false, default: '10' });
  expect(byName.ratio).toMatchObject({ title: 'ratio', type: 'number', required: false, default: null });
  expect(byName.mode).toMatchObject({ title: 'Mode', type: 'string', enumValues: ['a', 'b'], required: false });
  expect(byName.globs).toMatchObject({ type: 'array', itemsType: 'string', default: '["**/*"]' });
  expect(byName.options).toMatchObject({ type: 'object', itemsType: null });
  expect(byName.fail_after).toMatchObject({ type: 'integer', required: false, default: 'null' });
  expect(describeSchema(credentials).fields.map((field) => [field.name, field.isSecret, field.required])).toEqual([
    ['username', false, true],
    ['password', true, true],
  ]);
  expect(() => describeSchema(z.string())).toThrow(/object schemas/);
  expect(() => describeSchema(z.strictObject({ either: z.union([z.string(), z.int()]) }))).toThrow(/must be a string, number/);
});
