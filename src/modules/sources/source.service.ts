import type { Connector } from '../../connectors/connector.js';
import { describeFields } from '../../connectors/fields.js';
import { NotFoundError } from '../../shared/errors.js';
import type { Source } from './source.types.js';

/** The catalog of source types: what each offers and needs, read from the connector plugins. */
export class SourceService {
  constructor(private readonly connectors: ReadonlyMap<string, Connector>) {}

  list(): Source[] {
    return [...this.connectors.values()].map(describe).sort((a, b) => a.shortName.localeCompare(b.shortName));
  }

  get(shortName: string): Source {
    const connector = this.connectors.get(shortName);
    if (!connector) throw NotFoundError.of('Source', shortName);
    return describe(connector);
  }

  connector(shortName: string): Connector {
    const connector = this.connectors.get(shortName);
    if (!connector) throw NotFoundError.of('Source', shortName);
    return connector;
  }
}

function describe(connector: Connector): Source {
  return {
    shortName: connector.shortName,
    name: connector.name,
    description: connector.description,
    authMethods: connector.authMethods,
    oauthType: null,
    requiresByoc: false,
    authFields: connector.authFields ? describeFields(connector.authFields) : null,
    configFields: describeFields(connector.configFields),
    supportedAuthProviders: connector.supportedAuthProviders,
    supportsContinuous: connector.supportsContinuous,
    federatedSearch: connector.federatedSearch,
    labels: connector.labels,
    outputEntityDefinitions: connector.outputEntityDefinitions,
  };
}
