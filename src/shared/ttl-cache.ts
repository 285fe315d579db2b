import type { EntityManager, EventSubscriber, FlushEventArgs, MikroORM, TransactionEventArgs } from '@mikro-orm/core';

/**
 * A small read-through cache for lookups (credentials, search scopes, a collection's shards): entries
 * live `ttlMs`, concurrent misses of one key share one load, and `invalidate()` drops everything (or
 * one key), including loads under way (what they read may predate the change, so it is returned to
 * their caller but never kept); so does `set` for its key, which keeps what its caller knows to be
 * current. Only successful loads are kept: errors (not found, revoked) always reach the source again.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  /**
   * The load of each key under way that no change has overtaken since it began: a change (`set`,
   * `invalidate`) removes it, so a load finding itself still here when it ends may be kept.
   */
  private readonly loading = new Map<string, Promise<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The value kept for `key`, else what `load` gives. `keep` decides whether a loaded value is kept,
   * given the value it replaces (kept before, expired or not): it runs only for a load no change
   * overtook, so it may act on what the new value says changed.
   */
  async get(key: string, load: () => Promise<V>, keep?: (value: V, replaced: V | undefined) => boolean): Promise<V> {
    if (this.ttlMs <= 0) return load();
    const entry = this.entries.get(key);
    if (entry && entry.expires > this.now()) return entry.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const promise = load().then(
      (value) => {
        if (this.loading.get(key) !== promise) return value; // overtaken by a change
        this.loading.delete(key);
        if (keep?.(value, this.entries.get(key)?.value) ?? true) this.keep(key, value);
        return value;
      },
      (error: unknown) => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }

  /** The value kept for `key`, expired or not, without loading. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Keeps `value` for `key` from now on; loads of the key under way are returned to their callers but not kept. */
  set(key: string, value: V): void {
    this.loading.delete(key);
    if (this.ttlMs > 0) this.keep(key, value);
  }

  /** Drops `key` (everything without one), with the loads of it under way. */
  invalidate(key?: string): void {
    if (key === undefined) {
      this.entries.clear();
      this.loading.clear();
      return;
    }
    this.loading.delete(key);
    this.entries.delete(key);
  }

  private keep(key: string, value: V): void {
    this.entries.delete(key); // kept again: newest in the order below
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
