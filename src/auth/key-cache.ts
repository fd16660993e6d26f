import type { Db } from '../db/database.ts';
import type { Store } from '../store/store.ts';
import { findActiveKey } from '../keys/api-keys.repository.ts';
import type { KeyPolicy } from '../keys/key-policy.ts';
import { hashApiKey, sameHash } from './api-keys.ts';
import { LruMap } from './lru-map.ts';

export interface AuthContext {
  accountId: number;
  keyId: number;
  /** The key's limits (docs/keys.md); absent: none. */
  policy?: KeyPolicy;
}

const REVOKED_CHANNEL = 'auth:revoked';
/** Positive entries live long (revocation is pushed); negative ones briefly, against DB hammering. */
const HIT_TTL_MS = 10 * 60_000;
const MISS_TTL_MS = 5_000;
const MAX_ENTRIES = 100_000;
/** Unknown keys get their own, smaller LRU: a flood of made-up keys never evicts a real one. */
const MAX_MISSES = 10_000;

interface Hit {
  auth: AuthContext;
  keyHash: string;
  expiresAt: number;
}

type ActiveKeyRow = { accountId: number; keyId: number; keyHash: string; policy?: KeyPolicy } | undefined;

export interface KeyCacheOptions {
  maxEntries?: number;
  maxMisses?: number;
  missTtlMs?: number;
  now?: () => number;
  /** The database read (tests count it). */
  findKey?: (keyHash: string) => Promise<ActiveKeyRow>;
}

/**
 * Resolves an API key to its account and policy without touching the database on a warm key. A
 * regenerated, edited or revoked key is announced on the store's pub/sub channel, and every instance drops it
 * at once; the TTL is only a backstop should a message be lost.
 *
 * Known keys live in an LRU of `maxEntries`; unknown keys are remembered for `MISS_TTL_MS` in a
 * separate LRU, so repeating a wrong key costs no query. A key-change message also clears every
 * negative entry: a key that became valid somewhere is never refused here for long.
 */
export class KeyCache {
  private readonly hits: LruMap<string, Hit>;
  private readonly misses: LruMap<string, number>;
  private readonly pending = new Map<string, Promise<AuthContext | null>>();
  private readonly missTtlMs: number;
  private readonly now: () => number;
  private readonly findKey: (keyHash: string) => Promise<ActiveKeyRow>;
  /** Bumped on every key change: a load that started before it does not cache its answer. */
  private generation = 0;
  private readonly changeListeners: Array<(keyId: number) => void> = [];

  constructor(
    db: Db,
    private readonly store: Store,
    opts: KeyCacheOptions = {},
  ) {
    this.hits = new LruMap(opts.maxEntries ?? MAX_ENTRIES);
    this.misses = new LruMap(opts.maxMisses ?? MAX_MISSES);
    this.missTtlMs = opts.missTtlMs ?? MISS_TTL_MS;
    this.now = opts.now ?? Date.now;
    this.findKey = opts.findKey ?? ((keyHash) => findActiveKey(db, keyHash));
  }

  async start(): Promise<void> {
    await this.store.subscribe(REVOKED_CHANNEL, (keyHash) => this.forget(keyHash));
    this.store.onResubscribed(() => this.forgetAll());
  }

  /** How many keys are cached (known, unknown). */
  get size(): { hits: number; misses: number } {
    return { hits: this.hits.size, misses: this.misses.size };
  }

  async authenticate(key: string): Promise<AuthContext | null> {
    const keyHash = hashApiKey(key);
    const now = this.now();
    const hit = this.hits.get(keyHash);
    if (hit && hit.expiresAt > now) {
      // The map lookup found it by hash; confirm in constant time all the same.
      return sameHash(hit.keyHash, keyHash) ? hit.auth : null;
    }
    const missUntil = this.misses.peek(keyHash);
    if (missUntil !== undefined) {
      if (missUntil > now) return null;
      this.misses.delete(keyHash);
    }
    // Concurrent first requests with one key share a single query.
    let loading = this.pending.get(keyHash);
    if (!loading) {
      const started: Promise<AuthContext | null> = this.load(keyHash).finally(() => {
        if (this.pending.get(keyHash) === started) this.pending.delete(keyHash);
      });
      this.pending.set(keyHash, started);
      loading = started;
    }
    return loading;
  }

  private async load(keyHash: string): Promise<AuthContext | null> {
    const generation = this.generation;
    const row = await this.findKey(keyHash);
    const auth =
      row && sameHash(row.keyHash, keyHash) ? { accountId: row.accountId, keyId: row.keyId, policy: row.policy } : null;
    // A key changed while the row was read: the answer may predate it, so it is not kept.
    if (generation !== this.generation) return auth;
    if (auth) {
      this.misses.delete(keyHash);
      this.hits.set(keyHash, { auth, keyHash, expiresAt: this.now() + HIT_TTL_MS });
    } else {
      this.hits.delete(keyHash);
      this.misses.set(keyHash, this.now() + this.missTtlMs);
    }
    return auth;
  }

  /** Calls `listener` with the id of a key cached here when it is edited or revoked anywhere. */
  onChange(listener: (keyId: number) => void): void {
    this.changeListeners.push(listener);
  }

  /** A key changed (here or on another instance): drop it, and every negative entry with it. */
  private forget(keyHash: string): void {
    const known = this.hits.peek(keyHash);
    if (known) for (const listener of this.changeListeners) listener(known.auth.keyId);
    this.hits.delete(keyHash);
    // A request arriving from now on reads the row afresh instead of joining an older read.
    this.pending.delete(keyHash);
    this.misses.clear();
    this.generation++;
  }

  /** Messages may have been missed (the store's connection came back): nothing cached is trusted. */
  private forgetAll(): void {
    for (const keyHash of [...this.hits.keys()]) this.forget(keyHash);
    this.misses.clear();
    this.pending.clear();
    this.generation++;
  }

  /** Drops the keys here and tells every other instance to do the same. */
  async revoke(keyHashes: string[]): Promise<void> {
    for (const hash of keyHashes) {
      this.forget(hash);
      await this.store.publish(REVOKED_CHANNEL, hash);
    }
  }
}
