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
  @Field(() => Int, { description: 'Unchanged entities that were kept as they were.' }) entitiesSkipped!: number;
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
