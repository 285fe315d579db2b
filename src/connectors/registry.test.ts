import { describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { credentialsSchemaOf, describeSchema, parseConfig } from './contract/schemas.js';
import { loadConnectors } from './registry.js';

const connectors = await loadConnectors();

test('every folder with an index module is a source, named after its folder', () => {
  expect([...connectors.keys()]).toEqual(['git', 'github', 'gitlab', 'google_drive', 'linear', 'local_folder', 'mysql', 'notion', 'postgresql', 'push', 'rss', 's3', 'stub', 'web']);
});

test('a folder whose connector has another name is refused', async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'catchment-connectors-'));
  mkdirSync(path.join(directory, 'shared'));
  writeFileSync(path.join(directory, 'shared', 'helpers.js'), 'export const x = 1;');
  mkdirSync(path.join(directory, 'alpha'));
  writeFileSync(path.join(directory, 'alpha', 'index.js'), "export default { shortName: 'beta' };");
  await expect(loadConnectors(pathToFileURL(directory + path.sep))).rejects.toThrow(/named "beta"/);
});

describe.each([...connectors.values()].map((connector) => [connector.shortName, connector] as const))('%s keeps the typed contract', (_name, connector) => {
  test('its config is a strict object the catalog can describe: unknown fields are refused', () => {
    expect(connector.config).toBeInstanceOf(z.ZodObject);
    const fields = describeSchema(connector.config).fields;
    expect(fields.every((field) => field.title.length > 0)).toBe(true);
    expect(parseConfig(connector, { not_a_field_of_any_source: 1 }).issues).toContainEqual({ loc: ['config', 'not_a_field_of_any_source'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  });

  test('its credentials (fields or pasted token), when it takes any, are an object the catalog can describe', () => {
    const { auth } = connector;
    const credentials = credentialsSchemaOf(connector);
    expect(credentials !== null).toBe(auth.kind === 'fields' || (auth.kind === 'oauth2' && auth.pasted !== undefined));
    if (credentials) expect(describeSchema(credentials).fields.length).toBeGreaterThan(0);
  });
});

const oauthSources = [...connectors.values()].flatMap((connector) => (connector.auth.kind === 'oauth2' ? [[connector.shortName, connector, connector.auth.oauth] as const] : []));

test.each(oauthSources)('%s, an OAuth 2 source, names https authorize and token endpoints with its default config', (_name, connector, oauth) => {
  const config = parseConfig(connector, {});
  expect(config.issues).toEqual([]);
  for (const url of [oauth.authorizeUrl(config.value), oauth.tokenUrl(config.value)]) expect(new URL(url).protocol).toBe('https:');
});
