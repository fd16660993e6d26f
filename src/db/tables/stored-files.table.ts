import type { Selectable } from 'kysely';
import type { CreatedAt } from './accounts.table.ts';

export interface StoredFilesTable {
  /** Unguessable token: it is the file's URL path. */
  id: string;
  account_id: number | null;
  storage_key: string;
  content_type: string;
  size_bytes: number;
  sha256: string | null;
  source: 'upload' | 'task_output' | 'voice_sample';
  created_at: CreatedAt;
}

export type StoredFileRow = Selectable<StoredFilesTable>;
