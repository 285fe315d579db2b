import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
// @ts-expect-error: a plain ESM script, run by `npm run web:codegen`
import { generate } from '../../web/codegen.mjs';

describe('web console types', () => {
  test('web/src/generated.ts is what web/codegen.mjs makes from schema.graphql and web/operations.graphql (run npm run web:codegen)', async () => {
    const current = readFileSync(new URL('../../web/src/generated.ts', import.meta.url), 'utf8');
    expect(current).toBe(await (generate as () => Promise<string>)());
  });
});
