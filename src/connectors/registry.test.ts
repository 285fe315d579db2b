import { expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConnectors } from './registry.js';

test('every folder with an index module is a source, named after its folder', async () => {
  const connectors = await loadConnectors();
  expect([...connectors.keys()]).toEqual(['git', 'local_folder', 'mysql', 'postgresql', 'push', 'rss', 's3', 'stub', 'web']);
});

test('a folder whose connector has another name is refused', async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'catchment-connectors-'));
  mkdirSync(path.join(directory, 'shared'));
  writeFileSync(path.join(directory, 'shared', 'helpers.js'), 'export const x = 1;');
  mkdirSync(path.join(directory, 'alpha'));
  writeFileSync(path.join(directory, 'alpha', 'index.js'), "export default { shortName: 'beta' };");
  await expect(loadConnectors(pathToFileURL(directory + path.sep))).rejects.toThrow(/named "beta"/);
});
