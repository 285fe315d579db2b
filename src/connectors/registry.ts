import type { Connector } from './connector.js';
import localFolder from './local_folder/index.js';
import stub from './stub/index.js';

/**
 * Every source type the service offers, by short name. A connector is a folder under
 * src/connectors/ default-exporting a Connector; list it here.
 */
const connectors: Connector[] = [localFolder, stub];

export const connectorRegistry: ReadonlyMap<string, Connector> = new Map(connectors.map((connector) => [connector.shortName, connector]));
