import type { AuthContext } from '../auth/key-cache.ts';
import { findActiveKey } from '../keys/api-keys.repository.ts';
import { sameHash } from '../auth/api-keys.ts';
import { LruMap } from '../auth/lru-map.ts';
import type { Db } from '../db/database.ts';
import type { Store } from '../store/store.ts';

/** The channel KeyCache announces revoked key hashes on (src/auth/key-cache.ts). */
const REVOKED_CHANNEL = 'auth:revoked';
const HIT_TTL_MS = 10 * 60_000;
const MISS_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/**
 * Whether the key a session was made from is still active, by its hash (a session never holds
 * the key itself, so KeyCache, which is keyed by the key, cannot answer). Cached like KeyCache
 * and dropped on the same revocation message, so a key regenerated on any instance ends the
 * sessions made from it at once, without a database read on every dashboard request.
 */
export class ActiveKeys {
  private readonly entries = new LruMap<string, { auth: AuthContext | null; expiresAt: number }>(MAX_ENTRIES);
  private subscribed?: Promise<unknown>;
  /** Bumped on every revocation: a read that started before it does not cache its answer. */
  private generation = 0;

  constructor(
    db: Db,
    private readonly store: Store,
    /** The database read (tests slow it down). */
    private readonly findKey: (keyHash: string) => ReturnType<typeof findActiveKey> = (keyHash) =>
      findActiveKey(db, keyHash),
  ) {}

  async lookup(keyHash: string): Promise<AuthContext | null> {
    // Subscribed on first use: an instance nobody signs in to never holds the subscription.
    this.subscribed ??= this.subscribe();
    await this.subscribed;
    const hit = this.entries.get(keyHash);
    if (hit && hit.expiresAt > Date.now()) return hit.auth;
    const generation = this.generation;
    const row = await this.findKey(keyHash);
    const auth =
      row && sameHash(row.keyHash, keyHash) ? { accountId: row.accountId, keyId: row.keyId, policy: row.policy } : null;
    // A revocation announced while the row was read may postdate it: the answer is not kept.
    if (generation === this.generation)
      this.entries.set(keyHash, { auth, expiresAt: Date.now() + (auth ? HIT_TTL_MS : MISS_TTL_MS) });
    return auth;
  }

  private subscribe(): Promise<unknown> {
    this.store.onResubscribed(() => {
      this.entries.clear();
      this.generation++;
    });
    return this.store.subscribe(REVOKED_CHANNEL, (hash) => {
      this.entries.delete(hash);
      this.generation++;
    });
  }
}
