import type { Db } from '../db/database.ts';
import type { Store } from '../store/store.ts';
import { findActiveKey } from '../accounts/accounts.repository.ts';
import { hashApiKey, sameHash } from './api-keys.ts';

export interface AuthContext {
  accountId: number;
  keyId: number;
}

const REVOKED_CHANNEL = 'auth:revoked';
/** Positive entries live long (revocation is pushed); negative ones briefly, against DB hammering. */
const HIT_TTL_MS = 10 * 60_000;
const MISS_TTL_MS = 5_000;
const MAX_ENTRIES = 100_000;

interface Entry {
  auth: AuthContext | null;
  keyHash: string;
  expiresAt: number;
}

/**
 * Resolves an API key to its account without touching the database on a warm key. A
 * regenerated key is announced on the store's pub/sub channel, and every instance drops it
 * at once; the TTL is only a backstop should a message be lost.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<AuthContext | null>>();

  constructor(
    private readonly db: Db,
    private readonly store: Store,
  ) {}

  async start(): Promise<void> {
    await this.store.subscribe(REVOKED_CHANNEL, (keyHash) => this.entries.delete(keyHash));
  }

  async authenticate(key: string): Promise<AuthContext | null> {
    const keyHash = hashApiKey(key);
    const hit = this.entries.get(keyHash);
    if (hit && hit.expiresAt > Date.now()) {
      // The map lookup found it by hash; confirm in constant time all the same.
      return hit.auth && sameHash(hit.keyHash, keyHash) ? hit.auth : null;
    }
    // Concurrent first requests with one key share a single query.
    let loading = this.pending.get(keyHash);
    if (!loading) {
      loading = this.load(keyHash).finally(() => this.pending.delete(keyHash));
      this.pending.set(keyHash, loading);
    }
    return loading;
  }

  private async load(keyHash: string): Promise<AuthContext | null> {
    const row = await findActiveKey(this.db, keyHash);
    const auth = row && sameHash(row.keyHash, keyHash) ? { accountId: row.accountId, keyId: row.keyId } : null;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(keyHash, { auth, keyHash, expiresAt: Date.now() + (auth ? HIT_TTL_MS : MISS_TTL_MS) });
    return auth;
  }

  /** Drops the keys here and tells every other instance to do the same. */
  async revoke(keyHashes: string[]): Promise<void> {
    for (const hash of keyHashes) {
      this.entries.delete(hash);
      await this.store.publish(REVOKED_CHANNEL, hash);
    }
  }
}
