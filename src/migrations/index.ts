import type { Migration } from '@mikro-orm/migrations';
import { Migration20261122184816_initial } from './Migration20261122184816_initial.js';
import { Migration20261122192523_sync } from './Migration20261122192523_sync.js';
import { Migration20261122221157_webhooks } from './Migration20261122221157_webhooks.js';
import { Migration20261123105925_push } from './Migration20261123105925_push.js';
import { Migration20261123233000_job_total } from './Migration20261123233000_job_total.js';
import { Migration20261124000000_job_skipped } from './Migration20261124000000_job_skipped.js';
import { Migration20261124010000_resume_cursor } from './Migration20261124010000_resume_cursor.js';
import { Migration20261124020000_oauth } from './Migration20261124020000_oauth.js';
import { Migration20261124030000_operator_app_token_url } from './Migration20261124030000_operator_app_token_url.js';
import { Migration20261124040000_entities_key } from './Migration20261124040000_entities_key.js';
import { Migration20261124050000_entities_connection_trigger } from './Migration20261124050000_entities_connection_trigger.js';
import { Migration20261125000000_pending_cleanups } from './Migration20261125000000_pending_cleanups.js';
import { Migration20261125100000_index_optimized_at } from './Migration20261125100000_index_optimized_at.js';
import { Migration20261202000000_counts_at_checkpoint } from './Migration20261202000000_counts_at_checkpoint.js';

type MigrationClass = new (...args: ConstructorParameters<typeof Migration>) => Migration;

/** Applied in this order. Generate the next one with `npm run catchment -- migrate:create`, then append it here. */
export const migrations: { name: string; class: MigrationClass }[] = [
  { name: 'Migration20261122184816_initial', class: Migration20261122184816_initial },
  { name: 'Migration20261122192523_sync', class: Migration20261122192523_sync },
  { name: 'Migration20261122221157_webhooks', class: Migration20261122221157_webhooks },
  { name: 'Migration20261123105925_push', class: Migration20261123105925_push },
  { name: 'Migration20261123233000_job_total', class: Migration20261123233000_job_total },
  { name: 'Migration20261124000000_job_skipped', class: Migration20261124000000_job_skipped },
  { name: 'Migration20261124010000_resume_cursor', class: Migration20261124010000_resume_cursor },
  { name: 'Migration20261124020000_oauth', class: Migration20261124020000_oauth },
  { name: 'Migration20261124030000_operator_app_token_url', class: Migration20261124030000_operator_app_token_url },
  { name: 'Migration20261124040000_entities_key', class: Migration20261124040000_entities_key },
  { name: 'Migration20261124050000_entities_connection_trigger', class: Migration20261124050000_entities_connection_trigger },
  { name: 'Migration20261125000000_pending_cleanups', class: Migration20261125000000_pending_cleanups },
  { name: 'Migration20261125100000_index_optimized_at', class: Migration20261125100000_index_optimized_at },
  { name: 'Migration20261202000000_counts_at_checkpoint', class: Migration20261202000000_counts_at_checkpoint },
];
