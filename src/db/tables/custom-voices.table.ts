import type { Selectable } from 'kysely';
import type { CreatedAt } from './accounts.table.ts';
import type { Json } from './tasks.table.ts';

/** A custom voice: usable only by `account_id`, and never listed (docs/api-contract.md). */
export interface CustomVoicesTable {
  provider: string;
  voice_id: string;
  account_id: number;
  name: string;
  /** JSON array of `stored_files` ids: the kept copies of the samples. */
  sample_file_ids: Json;
  created_at: CreatedAt;
}

export type CustomVoiceRow = Selectable<CustomVoicesTable>;
