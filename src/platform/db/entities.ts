import { ApiKey, Organization, SigningKey, User } from '../../modules/organizations/organization.entity.js';
import { Collection } from '../../modules/collections/collection.entity.js';

/** Every persisted entity; migrations are generated from these (`catchment migrate:create`). */
export const entities = [Organization, ApiKey, User, SigningKey, Collection];
