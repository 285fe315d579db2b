import { SYNC_CONFIG_DEFAULTS, type SyncConfig } from '../collections/sync-config.js';

export type EffectiveSyncConfig = { [M in keyof SyncConfig]: NonNullable<SyncConfig[M]> };

/**
 * Collection → connection → job: for each member, the most specific layer that sets it wins,
 * and a member no layer sets takes its defaults.
 */
export function layerSyncConfigs(...layers: (SyncConfig | null | undefined)[]): EffectiveSyncConfig {
  const effective = structuredClone(SYNC_CONFIG_DEFAULTS) as EffectiveSyncConfig;
  for (const layer of layers) {
    if (!layer) continue;
    for (const member of Object.keys(effective) as (keyof SyncConfig)[]) {
      const value = layer[member];
      if (value) (effective as Record<string, unknown>)[member] = structuredClone(value);
    }
  }
  return effective;
}
