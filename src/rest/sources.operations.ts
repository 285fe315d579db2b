import type { ParsedRequest as Request } from 'openapi-backend';
import { renameKeys, snakeCase } from '../shared/case.js';
import type { RestOperation } from './operation.js';

const FIELDS = 'fields { name title description type required itemsType isSecret enumValues default }';
const SOURCE_FIELDS = `
  fragment SourceFields on Source {
    shortName name description authMethods oauthType requiresByoc oauthRedirectUri supportedAuthProviders supportsContinuous
    federatedSearch labels outputEntityDefinitions authFields { ${FIELDS} } configFields { ${FIELDS} }
  }`;

/** Field defaults travel JSON-encoded through GraphQL; REST shows them as values. */
function sourceToRest(source: unknown): unknown {
  const rest = renameKeys(source, snakeCase) as { auth_fields: { fields: { default: string | null }[] } | null; config_fields: { fields: { default: string | null }[] } };
  for (const group of [rest.auth_fields, rest.config_fields]) {
    for (const field of group?.fields ?? []) (field as { default: unknown }).default = field.default === null ? null : JSON.parse(field.default);
  }
  return rest;
}

const shortName = (request: Request) => String((request.params as Record<string, string>).short_name);

export const sourceOperations: Record<string, RestOperation> = {
  listSources: {
    document: `query { sources { ...SourceFields } } ${SOURCE_FIELDS}`,
    inputLocation: 'query',
    variables: () => ({}),
    respond: (data) => (data.sources as unknown[]).map(sourceToRest),
  },
  getSource: {
    document: `query ($shortName: String!) { source(shortName: $shortName) { ...SourceFields } } ${SOURCE_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ shortName: shortName(request) }),
    respond: (data) => (data.source === null ? undefined : sourceToRest(data.source)),
    notFound: (request) => `Source "${shortName(request)}" not found`,
  },
};
