import { describe, expect, test } from '@jest/globals';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { loadOpenApiDocument, requestValidator } from './facade.js';

/** A backend over `document`, initialized as the facade initializes its own (validation switched on after). */
async function initialized(document: Document): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({ definition: document, strict: true, quick: false, validate: false, coerceTypes: true });
  api.validateDefinition = () => document;
  await api.init();
  return api;
}

const tiny = (requestSchema: object): Document =>
  ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        post: {
          operationId: 'createThing',
          requestBody: { required: true, content: { 'application/json': { schema: requestSchema } } },
          responses: { '201': { description: 'made', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } } } },
        },
      },
    },
  }) as Document;

describe('the REST facade’s request validators', () => {
  test('are compiled for every operation of the contract at start, and no response validator is', async () => {
    const api = await initialized(loadOpenApiDocument());
    const validator = requestValidator(api);
    const operationIds = api.router.getOperations().map((operation) => operation.operationId);
    expect(operationIds.length).toBeGreaterThan(20);
    expect(Object.keys(validator.requestValidators).sort()).toEqual([...operationIds].sort());
    expect(Object.keys(validator.responseValidators)).toEqual([]);
    expect(Object.keys(validator.statusBasedResponseValidators)).toEqual([]);
  });

  test('refuse bad input by the 2020-12 schema', async () => {
    const api = await initialized(tiny({ type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } }, additionalProperties: false }));
    const validator = requestValidator(api);
    const request = (body: unknown) => ({ method: 'post', path: '/things', headers: { 'content-type': 'application/json' }, body });
    expect(validator.validateRequest(request({ name: 'a' }), 'createThing').valid).toBe(true);
    const refused = validator.validateRequest(request({ name: '', extra: 1 }), 'createThing');
    expect(refused.valid).toBe(false);
    expect(refused.errors!.map((error) => error.keyword).sort()).toEqual(['additionalProperties', 'minLength']);
  });

  test('make a schema Ajv rejects fail the start, not a request', async () => {
    const api = await initialized(tiny({ type: 'object', properties: { name: { type: 'string', minLenght: 1 } } }));
    expect(() => requestValidator(api)).toThrow(/minLenght/);
  });
});
