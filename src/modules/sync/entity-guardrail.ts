import type { EntityStore } from './entity-store.js';

/** A run refused by the guardrail. */
class GuardrailError extends Error {}

/** What the guardrail of one run needs to know. */
export interface GuardrailScope {
  /** behavior.skip_guardrails: the run is not checked. */
  skip: boolean;
  /** The run sees everything the source holds (see SourceRun.complete). */
  complete: boolean;
  sourceConnectionId: string;
  maxEntities: number;
  entities: Pick<EntityStore, 'stats' | 'hashes'>;
}

/**
 * The entity-count guardrail of one run, per connection. A complete run sees everything the source
 * holds, so what it saw is the count. A run that sees only changes (push batches, change feeds) counts
 * what the connection already stores, plus the entities it adds, minus the stored ones it deletes:
 * otherwise many small batches would grow a connection past the limit.
 */
export class EntityGuardrail {
  private stored: number | null = null;
  private added = 0;
  private removed = 0;

  constructor(private readonly scope: GuardrailScope) {}

  /** Before a batch is written: its new entities and its deletions of stored ones. */
  async check(seen: number, added: number, deletions: string[]): Promise<void> {
    const { skip, complete, sourceConnectionId, maxEntities, entities } = this.scope;
    if (skip) return;
    if (complete) {
      if (seen > maxEntities) this.refuse(`The source holds more than ${maxEntities} entities`);
      return;
    }
    this.stored ??= (await entities.stats([sourceConnectionId])).get(sourceConnectionId)?.total ?? 0;
    this.added += added;
    if (deletions.length) this.removed += (await entities.hashes(sourceConnectionId, deletions)).size;
    if (this.stored + this.added - this.removed > maxEntities) this.refuse(`The connection would hold more than ${maxEntities} entities`);
  }

  private refuse(what: string): never {
    throw new GuardrailError(`${what} (the guardrail); run with behavior.skip_guardrails to sync anyway`);
  }
}
