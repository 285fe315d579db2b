import type { EntityManager, EventSubscriber, FlushEventArgs, MikroORM, TransactionEventArgs } from '@mikro-orm/core';

/**
 * A small read-through cache for per-request lookups (credentials, search scopes): entries live
 * `ttlMs`, concurrent misses of one key share one load, and `invalidate()` drops everything,
 * including loads under way (what they read may predate the change, so it is returned to their
 * caller but never kept). Only successful loads are kept: errors (not found, revoked) always reach
 * the source again.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly loading = new Map<string, { generation: number; promise: Promise<V> }>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string, load: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) return load();
    const entry = this.entries.get(key);
    if (entry) {
      if (entry.expires > this.now()) return entry.value;
      this.entries.delete(key);
    }
    const pending = this.loading.get(key);
    if (pending && pending.generation === this.generation) return pending.promise;
    const generation = this.generation;
    const promise = load().then(
      (value) => {
        if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
        if (generation === this.generation) this.keep(key, value);
        return value;
      },
      (error: unknown) => {
        if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, { generation, promise });
    return promise;
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  private keep(key: string, value: V): void {
    // Oldest first: Map keeps insertion order.
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, expires: this.now() + this.ttlMs });
  }
}

/**
 * Calls `invalidate` whenever this process writes through the ORM's unit of work (a flush with a
 * change set of one of `entities`, or of any entity with 'all'): after the flush, and again when its
 * transaction commits or rolls back, so that a lookup racing the commit cannot keep the old state.
 * Writes of other processes, and native queries outside a flush, are not seen: caches using this
 * keep a short TTL for them.
 */
export function invalidateOnWrites(orm: MikroORM, entities: readonly (abstract new (...args: never[]) => unknown)[] | 'all', invalidate: () => void): void {
  const watched = entities === 'all' ? null : new Set<unknown>(entities);
  const open = new WeakSet<EntityManager>();
  const settled = ({ em }: TransactionEventArgs) => {
    if (!open.has(em)) return;
    open.delete(em);
    invalidate();
  };
  const subscriber: EventSubscriber = {
    afterFlush: ({ em, uow }: FlushEventArgs) => {
      const changeSets = uow.getChangeSets();
      if (changeSets.length === 0 || (watched && !changeSets.some((changeSet) => watched.has(changeSet.meta.class)))) return;
      invalidate();
      if (em.isInTransaction()) open.add(em);
    },
    afterTransactionCommit: settled,
    afterTransactionRollback: settled,
  };
  orm.em.getEventManager().registerSubscriber(subscriber);
}
