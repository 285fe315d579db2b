import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import type { Connector } from './connector.js';

/**
 * Every source type the service offers, by short name: each folder under src/connectors/ with an
 * index module default-exporting a Connector whose short name is the folder's name. Adding a source
 * is adding a folder.
 */
export async function loadConnectors(directory = new URL('./', import.meta.url)): Promise<ReadonlyMap<string, Connector>> {
  const connectors = new Map<string, Connector>();
  const folders = (await readdir(directory, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  for (const folder of folders) {
    const index = ['index.ts', 'index.js'].map((name) => new URL(`${folder}/${name}`, directory)).find((url) => existsSync(url));
    if (!index) continue; // shared code, not a source
    const connector = ((await import(index.href)) as { default?: Connector }).default;
    if (!connector?.shortName) throw new Error(`src/connectors/${folder} does not default-export a Connector`);
    if (connector.shortName !== folder) throw new Error(`The connector in src/connectors/${folder} is named "${connector.shortName}"; name its folder the same`);
    connectors.set(connector.shortName, connector);
  }
  return connectors;
}
