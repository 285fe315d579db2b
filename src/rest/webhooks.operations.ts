import type { ParsedRequest as Request } from 'openapi-backend';
import { camelCase, renameKeys, snakeCase } from '../shared/case.js';
import type { RestOperation } from './operation.js';

const ATTEMPT_FIELDS = `fragment AttemptFields on WebhookDeliveryAttempt { id messageId endpointId url response responseStatusCode status timestamp durationMs attemptNumber }`;
const SUBSCRIPTION_SELECTION = 'id url filterTypes disabled createdAt updatedAt healthStatus';
const SUBSCRIPTION_FIELDS = `fragment SubscriptionFields on WebhookSubscription { ${SUBSCRIPTION_SELECTION} }`;
const MESSAGE_FIELDS = `fragment MessageFields on WebhookMessage { id eventType payload timestamp channels }`;
const TASK_FIELDS = `fragment TaskFields on WebhookRecoveryTask { id subscriptionId status since until createdAt messageCount delivered failed pending }`;

/** The payload is what receivers get: its keys stay as they are. */
const OPAQUE = new Set(['payload']);
const toRest = (value: unknown) => renameKeys(value, snakeCase, OPAQUE) as Record<string, any>;
const body = (request: Request) => renameKeys(request.requestBody ?? {}, camelCase) as Record<string, unknown>;
const params = (request: Request) => request.params as Record<string, string>;
const query = (request: Request) => request.query as Record<string, string | string[] | undefined>;
const flag = (value: unknown) => String(value) === 'true';
const subscriptionNotFound = (request: Request) => `Webhook subscription "${params(request).subscription_id}" not found`;

/** A repeatable query parameter: absent, once or several times. */
function list(value: string | string[] | undefined): string[] | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value : [value];
}

/** Drops a field the caller did not ask for (the secret, the attempts) instead of showing it null. */
function without<T extends Record<string, unknown>>(record: T, key: string, keep: boolean): T {
  if (keep) return record;
  const { [key]: _, ...rest } = record;
  return rest as T;
}

export const webhookOperations: Record<string, RestOperation> = {
  listWebhookMessages: {
    document: `query ($eventTypes: [String!], $skip: Int!, $limit: Int!) { webhookMessages(eventTypes: $eventTypes, skip: $skip, limit: $limit) { ...MessageFields } } ${MESSAGE_FIELDS}`,
    inputLocation: 'query',
    variables: (request) => ({ eventTypes: list(query(request).event_types), skip: Number(query(request).skip ?? 0), limit: Number(query(request).limit ?? 100) }),
    respond: (data) => (data.webhookMessages as unknown[]).map(toRest),
  },
  getWebhookMessage: {
    document: `query ($id: ID!, $include: Boolean!) { webhookMessage(id: $id, includeAttempts: $include) { ...MessageFields deliveryAttempts { ...AttemptFields } } } ${MESSAGE_FIELDS} ${ATTEMPT_FIELDS}`,
    inputLocation: 'query',
    variables: (request) => ({ id: params(request).message_id, include: flag(query(request).include_attempts) }),
    respond: (data) => (data.webhookMessage === null ? undefined : without(toRest(data.webhookMessage), 'delivery_attempts', (data.webhookMessage as any).deliveryAttempts !== null)),
    notFound: (request) => `Webhook message "${params(request).message_id}" not found`,
  },
  listWebhookSubscriptions: {
    document: `query { webhookSubscriptions { ...SubscriptionFields } } ${SUBSCRIPTION_FIELDS}`,
    inputLocation: 'query',
    variables: () => ({}),
    respond: (data) => (data.webhookSubscriptions as unknown[]).map(toRest),
  },
  createWebhookSubscription: {
    document: `mutation ($input: WebhookSubscriptionCreateInput!) { createWebhookSubscription(input: $input) { ...SubscriptionFields } } ${SUBSCRIPTION_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ input: body(request) }),
    respond: (data) => toRest(data.createWebhookSubscription),
  },
  getWebhookSubscription: {
    document: `query ($id: ID!, $include: Boolean!) {
      webhookSubscription(id: $id, includeSecret: $include) { ${SUBSCRIPTION_SELECTION} secret deliveryAttempts { ...AttemptFields } }
    } ${ATTEMPT_FIELDS}`,
    inputLocation: 'query',
    variables: (request) => ({ id: params(request).subscription_id, include: flag(query(request).include_secret) }),
    respond: (data) => (data.webhookSubscription === null ? undefined : without(toRest(data.webhookSubscription), 'secret', (data.webhookSubscription as any).secret !== null)),
    notFound: subscriptionNotFound,
  },
  updateWebhookSubscription: {
    document: `mutation ($id: ID!, $input: WebhookSubscriptionUpdateInput!) { updateWebhookSubscription(id: $id, input: $input) { ...SubscriptionFields } } ${SUBSCRIPTION_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => ({ id: params(request).subscription_id, input: body(request) }),
    respond: (data) => toRest(data.updateWebhookSubscription),
  },
  deleteWebhookSubscription: {
    document: `mutation ($id: ID!) { deleteWebhookSubscription(id: $id) { ...SubscriptionFields } } ${SUBSCRIPTION_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ id: params(request).subscription_id }),
    respond: (data) => toRest(data.deleteWebhookSubscription),
  },
  recoverWebhookMessages: {
    document: `mutation ($id: ID!, $since: DateTimeISO!, $until: DateTimeISO) { recoverWebhookMessages(subscriptionId: $id, since: $since, until: $until) { ...TaskFields } } ${TASK_FIELDS}`,
    inputLocation: 'body',
    variables: (request) => {
      const input = body(request) as { since?: string; until?: string | null };
      return { id: params(request).subscription_id, since: input.since, until: input.until ?? null };
    },
    respond: (data) => toRest(data.recoverWebhookMessages),
  },
  getWebhookRecoveryTask: {
    document: `query ($id: ID!, $taskId: ID!) { webhookRecoveryTask(subscriptionId: $id, id: $taskId) { ...TaskFields } } ${TASK_FIELDS}`,
    inputLocation: 'path',
    variables: (request) => ({ id: params(request).subscription_id, taskId: params(request).task_id }),
    respond: (data) => (data.webhookRecoveryTask === null ? undefined : toRest(data.webhookRecoveryTask)),
    notFound: (request) => `Recovery task "${params(request).task_id}" not found`,
  },
};
