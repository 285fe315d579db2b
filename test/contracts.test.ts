import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { MikroORM } from '@mikro-orm/postgresql';
import { printGraphqlSchema } from '../src/graphql/schema.js';
import { ormOptions } from '../src/platform/db/database.js';
import { createTestDatabase } from './support/harness.js';
import { loadOpenApiDocument } from '../src/rest/facade.js';

describe('published contracts', () => {
  test('schema.graphql is what the code generates (run `npm run schema:print` after changing the schema)', async () => {
    const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(await printGraphqlSchema());
  });

  test('the committed migrations build exactly the schema the entities describe (run `migrate:create` after changing entities)', async () => {
    const database = await createTestDatabase();
    const orm = await MikroORM.init(ormOptions(database.url, 2));
    try {
      await orm.migrator.up();
      expect(await orm.schema.getUpdateSchemaSQL({ wrap: false })).toBe('');
    } finally {
      await orm.close(true);
      await database.drop();
    }
  });

  test('openapi/openapi.yaml is a valid OpenAPI 3.1 document with the spec\'s collections operations', async () => {
    const document = loadOpenApiDocument() as any;
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const operations = Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
      Object.entries(item).filter(([method]) => ['get', 'post', 'patch', 'delete', 'put'].includes(method)).map(([method, op]: [string, any]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /collections listCollections',
        'POST /collections createCollection',
        'GET /collections/{readable_id} getCollection',
        'PATCH /collections/{readable_id} updateCollection',
        'DELETE /collections/{readable_id} deleteCollection',
      ]),
    );
  });
});
