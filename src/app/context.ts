import type { AccountCache } from '../accounts/account-cache.ts';
import type { KeyCache } from '../auth/key-cache.ts';
import type { KeyRateLimits } from '../keys/key-rate-limits.ts';
import type { KeyUsage } from '../keys/key-usage.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { Env } from '../config/env.ts';
import type { GatewayConfig } from '../config/gateway-config.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import type { RateLimiter } from '../ops/rate-limiter.ts';
import type { Store } from '../store/store.ts';
import type { FileStore } from '../storage/file-store.ts';
import type { Storage } from '../storage/storage.ts';

/** The services every route module is built from; created once in main.ts. */
export interface AppContext {
  env: Env;
  config: GatewayConfig;
  db: Db;
  dbKind: 'postgres' | 'pglite';
  store: Store;
  catalog: Catalog;
  keys: KeyCache;
  /** When each key was last used (written in batches). */
  keyUsage?: KeyUsage;
  accounts: AccountCache;
  rateLimiter: RateLimiter;
  /** Keys' own rpm and tpm: one per process, so a process holds one lease per key and limit. */
  keyLimits: KeyRateLimits;
  /** Where file bytes live (local disk or S3). */
  storage: Storage;
  /** Stored files: bytes in `storage`, rows in `stored_files`, public `{upload_url}/files/<id>` URLs. */
  files: FileStore;
  log: Logger;
  /** Account id of each authenticated request, for the request log (never the key). */
  requestAccount: WeakMap<Request, number>;
  /**
   * With the settlement journal: the account's answered calls not yet settled in the database on
   * this process, which a read waits for (undefined when there are none).
   */
  unsettled?: (accountId: number) => Promise<void> | undefined;
}
