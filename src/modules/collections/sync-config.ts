import { UUID_PATTERN } from '../../shared/ids.js';
import type { ErrorLocation, ValidationIssue } from '../../shared/errors.js';
import { snakeCase } from '../../shared/case.js';

/**
 * SyncConfig as the spec defines it. Each member is optional; a member that is present is stored
 * with every flag filled in (defaults for the ones not sent), so what a client reads back is explicit.
 * Layering (collection → connection → job) is done by `layerSyncConfigs`.
 */
export interface SyncConfig {
  destinations: DestinationsConfig | null;
  handlers: HandlersConfig | null;
  cursor: CursorConfig | null;
  behavior: BehaviorConfig | null;
}

export interface DestinationsConfig {
  skipVectorDb: boolean;
  targetDestinations: string[] | null;
  excludeDestinations: string[] | null;
}
export interface HandlersConfig {
  enableVectorHandlers: boolean;
  enableRawDataHandler: boolean;
  enableEntityDbHandler: boolean;
}
export interface CursorConfig {
  skipLoad: boolean;
  skipUpdates: boolean;
}
export interface BehaviorConfig {
  skipHashComparison: boolean;
  replayFromArf: boolean;
  skipGuardrails: boolean;
}

export type SyncConfigPatch = {
  [M in keyof SyncConfig]?: Partial<NonNullable<SyncConfig[M]>> | null;
};

export const SYNC_CONFIG_DEFAULTS: { [M in keyof SyncConfig]: NonNullable<SyncConfig[M]> } = {
  destinations: { skipVectorDb: false, targetDestinations: null, excludeDestinations: null },
  handlers: { enableVectorHandlers: true, enableRawDataHandler: true, enableEntityDbHandler: true },
  cursor: { skipLoad: false, skipUpdates: false },
  behavior: { skipHashComparison: false, replayFromArf: false, skipGuardrails: false },
};

const MEMBERS = Object.keys(SYNC_CONFIG_DEFAULTS) as (keyof SyncConfig)[];

/**
 * Checks a sync config member by member (GraphQL already guarantees the types; this checks the
 * values, such as destination ids being UUIDs) and fills defaults into the members that are present.
 */
export function normalizeSyncConfig(input: SyncConfigPatch, loc: ErrorLocation): { value: SyncConfig; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const value = {} as Record<keyof SyncConfig, unknown>;
  for (const member of MEMBERS) {
    const given = input[member];
    if (given === undefined || given === null) {
      value[member] = null;
      continue;
    }
    const filled: Record<string, unknown> = { ...SYNC_CONFIG_DEFAULTS[member] };
    for (const [field, fieldValue] of Object.entries(given)) {
      if (fieldValue === undefined) continue;
      if (Array.isArray(fieldValue)) {
        fieldValue.forEach((id, index) => {
          if (typeof id !== 'string' || !UUID_PATTERN.test(id)) {
            issues.push({ loc: [...loc, member, snakeCase(field), index], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
          }
        });
      }
      filled[field] = fieldValue;
    }
    value[member] = filled;
  }
  return { value: value as unknown as SyncConfig, issues };
}
