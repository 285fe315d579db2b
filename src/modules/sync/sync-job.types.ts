import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: 'One run of a source connection\'s sync.' })
export class SyncJob {
  @Field(() => ID) id!: string;
  @Field(() => ID) sourceConnectionId!: string;
  @Field({ description: 'PENDING, RUNNING, COMPLETED, FAILED, CANCELLING or CANCELLED.' }) status!: string;
  @Field({ description: 'manual, schedule, create, push (a batch of entities sent to a push connection), or reembed (the collection is re-embedded with the active model).' }) trigger!: string;
  @Field() forceFullSync!: boolean;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) startedAt!: Date | null;
  @Field(() => Date, { nullable: true }) completedAt!: Date | null;
  @Field(() => Float, { nullable: true }) durationSeconds!: number | null;
  @Field(() => Int) entitiesInserted!: number;
  @Field(() => Int) entitiesUpdated!: number;
  @Field(() => Int) entitiesDeleted!: number;
  @Field(() => Int, { description: 'Entities not written: unchanged ones kept as they were, and the items the source left out (listed with their reasons in `skipped`).' })
  entitiesSkipped!: number;
  @Field(() => Int) entitiesFailed!: number;
  @Field(() => Int) chunksWritten!: number;
  @Field(() => Int, {
    nullable: true,
    description: 'The entities the source expects this run to yield (an estimate, known before they are read), for progress as "n of total"; null when the source does not know.',
  })
  entitiesTotal!: number | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) errorDetails!: Record<string, unknown> | null;
}

@ObjectType({ description: 'How many items a sync job left out for one reason.' })
export class SkippedReasonCount {
  @Field({ description: 'A short fixed phrase: unsupported file type, larger than max_file_bytes, binary content or no text, unreadable, excluded by include/exclude…' })
  reason!: string;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: 'An item a sync job left out, and why.' })
export class SkippedEntity {
  @Field({ description: 'The id the entity would have had (local_folder: the path relative to the folder).' }) entityId!: string;
  @Field() reason!: string;
  @Field(() => String, { nullable: true, description: 'What was found (a size, an error message), when it helps.' }) detail!: string | null;
}

@ObjectType({ description: 'What a sync job left out: all items counted by reason, the first 1,000 listed.' })
export class SkippedEntities {
  @Field(() => Int, { description: 'Items the source left out (part of entitiesSkipped).' }) count!: number;
  @Field(() => Int, { description: 'How many of them are listed (the first 1,000 at most).' }) listed!: number;
  @Field(() => [SkippedReasonCount], { description: 'Counts by reason, most frequent first.' }) byReason!: SkippedReasonCount[];
  @Field(() => [SkippedEntity], { description: 'The listed items in the order the source reported them, paged by limit and offset.' }) items!: SkippedEntity[];
}
