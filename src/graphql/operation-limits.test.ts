import { describe, expect, test } from '@jest/globals';
import { getIntrospectionQuery, parse } from 'graphql';
import { isStorableText } from '../shared/well-formed-text.js';
import { operationRefusal } from './operation-limits.js';
import { graphqlSchema } from './schema.js';

const LIMITS = { maxCost: 50_000, maxDepth: 20 };

async function refusal(query: string, variables?: Record<string, unknown>, limits = LIMITS) {
  return operationRefusal(await graphqlSchema(), parse(query), undefined, variables, limits);
}

describe('operationRefusal', () => {
  test('the standard introspection query passes the default limits', async () => {
    expect(await refusal(getIntrospectionQuery())).toBeNull();
  });

  test('cost: fields times the list size a limit asks for, from a literal, a variable, its default or the schema', async () => {
    const collections = (limit: string) => `query ($n: Int = 7) { collections${limit} { id name } }`;
    const costOf = async (query: string, variables?: Record<string, unknown>) => {
      // The smallest limit that still admits the query is its cost.
      let [low, high] = [1, 1_000_000];
      while (low < high) {
        const middle = Math.floor((low + high) / 2);
        if (await refusal(query, variables, { maxCost: middle, maxDepth: 20 })) low = middle + 1;
        else high = middle;
      }
      return low;
    };
    expect(await costOf(collections('(limit: 1000)'))).toBe(2001);
    expect(await costOf(collections('(limit: $n)'), { n: 10 })).toBe(21);
    expect(await costOf(collections('(limit: $n)'))).toBe(15); // the variable's default, 7
    expect(await costOf(collections(''))).toBe(201); // the schema's default, 100
    expect(await costOf('{ viewer { kind } }')).toBe(2); // no list size: counted once
  });

  test('a fragment expanding exponentially is refused after at most maxCost steps, and a fragment cycle does not loop', async () => {
    const bomb = ['fragment F0 on Query { viewer { kind } }', ...Array.from({ length: 60 }, (_, i) => `fragment F${i + 1} on Query { ...F${i} ...F${i} }`)].join('\n');
    const started = performance.now();
    expect((await refusal(`{ ...F60 } ${bomb}`))?.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await refusal('{ ...A } fragment A on Query { viewer { kind } ...B } fragment B on Query { ...A }')).toBeNull();
  });

  test('text: NUL and lone surrogates are refused at their place; surrogate pairs (emoji) are text like any other', async () => {
    expect(isStorableText('launch 🚀 notes')).toBe(true);
    expect(isStorableText('half \ud83d')).toBe(false);
    expect(isStorableText('tail \udca9 first')).toBe(false);
    expect(isStorableText('nul \u0000')).toBe(false);
    const error = await refusal('mutation ($input: CollectionCreateInput!) { createCollection(input: $input) { id } }', { input: { name: 'ok 🚀', readableId: 'a\u0000' } });
    expect(error?.extensions).toEqual({ code: 'BAD_USER_INPUT', detail: [{ loc: ['input', 'readableId'], msg: expect.any(String), type: 'string_unicode' }] });
    const literal = await refusal('{ collections(search: "x\\u0000") { id } }');
    expect(literal?.extensions.detail).toEqual([expect.objectContaining({ loc: ['search'] })]);
  });
});
