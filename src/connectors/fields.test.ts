import { expect, test } from '@jest/globals';
import type { FieldSpec } from './connector.js';
import { validateFields } from './fields.js';

const specs: FieldSpec[] = [
  { name: 'path', title: 'Path', type: 'string', required: true, isSecret: false },
  { name: 'count', title: 'Count', type: 'integer', required: false, isSecret: false, default: 10, minimum: 1, maximum: 100 },
  { name: 'mode', title: 'Mode', type: 'string', required: false, isSecret: false, enumValues: ['a', 'b'] },
  { name: 'globs', title: 'Globs', type: 'array', itemsType: 'string', required: false, isSecret: false, default: ['**/*'] },
];

test('valid values get defaults filled in, as copies', () => {
  const { value, issues } = validateFields(specs, { path: '/data' }, ['config']);
  expect(issues).toEqual([]);
  expect(value).toEqual({ path: '/data', count: 10, globs: ['**/*'] });
  (value.globs as string[]).push('x');
  expect(specs[3]!.default).toEqual(['**/*']);
});

test('every kind of problem is reported at its location', () => {
  const { issues } = validateFields(specs, { count: 0, mode: 'c', globs: ['ok', 3], extra: true }, ['config']);
  expect(issues).toEqual(
    expect.arrayContaining([
      { loc: ['config', 'extra'], msg: expect.any(String), type: 'extra_forbidden' },
      { loc: ['config', 'path'], msg: 'Field required', type: 'missing' },
      { loc: ['config', 'count'], msg: expect.any(String), type: 'greater_than_equal' },
      { loc: ['config', 'mode'], msg: expect.any(String), type: 'enum' },
      { loc: ['config', 'globs', 1], msg: expect.any(String), type: 'string_type' },
    ]),
  );
  expect(validateFields(specs, { path: 5 }, ['config']).issues).toEqual([{ loc: ['config', 'path'], msg: expect.any(String), type: 'string_type' }]);
  expect(validateFields(specs, { path: '  ' }, ['config']).issues[0]!.type).toBe('string_too_short');
});
