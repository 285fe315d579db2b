import { Field, ID, ObjectType } from 'type-graphql';
import { Collection } from '../collections/collection.types.js';
import { SyncJob } from './sync-job.types.js';

@ObjectType({ description: 'A connection the re-embedding did not start a sync for, and why.' })
export class ReembedSkip {
  @Field(() => ID) sourceConnectionId!: string;
  @Field() reason!: string;
}

@ObjectType({
  description:
    'A collection being re-embedded with the active embedding model: its index was emptied and every connection syncs again (jobs with trigger `reembed`). Search answers from what is re-embedded so far.',
})
export class CollectionReembedding {
  @Field(() => Collection, { description: 'The collection, now recording the active model.' }) collection!: Collection;
  @Field(() => [SyncJob]) jobs!: SyncJob[];
  @Field(() => [ReembedSkip]) skipped!: ReembedSkip[];
}
