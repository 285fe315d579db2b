import { ApiKey, Organization, SigningKey, User } from '../../modules/organizations/organization.entity.js';
import { Collection } from '../../modules/collections/collection.entity.js';
import { SourceConnection } from '../../modules/connections/source-connection.entity.js';
import { OAuthAuthorization } from '../../modules/connections/oauth/oauth-authorization.entity.js';
import { OperatorOAuthApp } from '../../modules/connections/oauth/operator-app.entity.js';
import { EntityRecord } from '../../modules/sync/entity-record.entity.js';
import { PendingCleanup } from '../../modules/sync/pending-cleanup.entity.js';
import { PushBatch } from '../../modules/sync/push-batch.entity.js';
import { SyncJob } from '../../modules/sync/sync-job.entity.js';
import { WebhookAttempt, WebhookDelivery, WebhookMessage, WebhookRecoveryTask, WebhookSubscription } from '../../modules/webhooks/webhook.entities.js';

/** Every persisted entity; migrations are generated from these (`catchment migrate:create`). */
export const entities = [Organization, ApiKey, User, SigningKey, Collection, SourceConnection, OAuthAuthorization, OperatorOAuthApp, SyncJob, EntityRecord, PushBatch, PendingCleanup, WebhookSubscription, WebhookMessage, WebhookDelivery, WebhookAttempt, WebhookRecoveryTask];
