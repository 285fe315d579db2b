import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One authentication or configuration field of a source type.' })
export class SourceField {
  @Field() name!: string;
  @Field() title!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field({ description: 'string, integer, number, boolean, array or object.' }) type!: string;
  @Field() required!: boolean;
  @Field(() => String, { nullable: true, description: 'Element type of an array field.' }) itemsType!: string | null;
  @Field({ description: 'Secret values are encrypted at rest and never returned.' }) isSecret!: boolean;
  @Field(() => [String], { nullable: true }) enumValues!: string[] | null;
  @Field(() => String, { nullable: true, description: 'Default value, JSON-encoded.' }) default!: string | null;
}

@ObjectType()
export class SourceFields {
  @Field(() => [SourceField]) fields!: SourceField[];
}

@ObjectType({ description: 'A connectable source type of the catalog.' })
export class Source {
  @Field({ description: 'Source type identifier.' }) shortName!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => [String], { description: 'direct, oauth_browser, oauth_token, oauth_byoc or auth_provider.' }) authMethods!: string[];
  @Field(() => String, { nullable: true }) oauthType!: string | null;
  @Field() requiresByoc!: boolean;
  @Field(() => String, {
    nullable: true,
    description:
      "OAuth sources: the redirect URI to register in an OAuth app of your own (oauth_byoc), the service's callback (<CATCHMENT_PUBLIC_URL>/oauth/callback) that browser sign-ins send. Null for sources without OAuth.",
  })
  oauthRedirectUri!: string | null;
  @Field(() => SourceFields, { nullable: true, description: 'Null when the source needs no credentials.' }) authFields!: SourceFields | null;
  @Field(() => SourceFields) configFields!: SourceFields;
  @Field(() => [String]) supportedAuthProviders!: string[];
  @Field({ description: 'Supports incremental syncs with a cursor.' }) supportsContinuous!: boolean;
  @Field({ description: 'Searched in real time instead of synced.' }) federatedSearch!: boolean;
  @Field(() => [String]) labels!: string[];
  @Field(() => [String]) outputEntityDefinitions!: string[];
}
