import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { CollectionResolver } from '../modules/collections/collection.resolver.js';
import { OrganizationResolver } from '../modules/organizations/organization.resolver.js';
import { SourceConnectionResolver } from '../modules/connections/source-connection.resolver.js';
import { SyncJobSkippedResolver } from '../modules/sync/sync-job-skipped.resolver.js';
import { CollectionEntitiesResolver } from '../modules/collections/collection-entities.resolver.js';
import { SearchResolver } from '../modules/search/search.resolver.js';
import { PushBatchResolver } from '../modules/sync/push-batch.resolver.js';
import { ReembedResolver } from '../modules/sync/reembed.resolver.js';
import { SourceResolver } from '../modules/sources/source.resolver.js';
import { WebhookResolver } from '../modules/webhooks/webhook.resolver.js';

let built: Promise<GraphQLSchema> | undefined;

/** The one schema every transport executes against: Apollo, graphql-sse and the REST facade. */
export function graphqlSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers: [OrganizationResolver, CollectionResolver, SourceResolver, CollectionEntitiesResolver, SourceConnectionResolver, SyncJobSkippedResolver, PushBatchResolver, ReembedResolver, SearchResolver, WebhookResolver],
    // Business rules are validated by the services, which know them; not by class-validator.
    validate: false,
    // type-graphql insists on a PubSub when a schema has subscriptions, but ours each bring a
    // `subscribe` function over the process's PubSub adapter (it lives in the context, not here).
    pubSub: {
      publish: () => {
        throw new Error('publish through context.services.pubsub');
      },
      subscribe: () => {
        throw new Error('subscriptions use their own subscribe function');
      },
    },
  });
  return built;
}

/** SDL as committed in schema.graphql (sorted, so the file only changes when the schema does). */
export async function printGraphqlSchema(): Promise<string> {
  return printSchema(lexicographicSortSchema(await graphqlSchema())) + '\n';
}
