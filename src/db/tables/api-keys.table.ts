import type { Generated, Selectable } from 'kysely';
import type { CreatedAt } from './accounts.table.ts';

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  /** Lowercase hex SHA-256 of the whole key; the key itself is never stored. */
  key_hash: string;
  /** The first characters, to tell keys apart in logs and the dashboard. */
  key_prefix: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
