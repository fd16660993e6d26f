import type { DbOrTrx } from '../db/database.ts';
import type { StoredFileRow, StoredFilesTable } from '../db/tables/stored-files.table.ts';

/** The `stored_files` table: metadata of the bytes kept in Storage under the same id. */
export type NewStoredFile = Pick<
  StoredFilesTable,
  'id' | 'account_id' | 'storage_key' | 'content_type' | 'size_bytes' | 'sha256' | 'source'
>;

export async function insertStoredFile(db: DbOrTrx, row: NewStoredFile): Promise<void> {
  await db.insertInto('stored_files').values(row).execute();
}

export function findStoredFile(db: DbOrTrx, id: string): Promise<StoredFileRow | undefined> {
  return db.selectFrom('stored_files').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Deletes the row and answers where its bytes were, so the caller can delete them too. */
export async function deleteStoredFile(db: DbOrTrx, id: string): Promise<string | undefined> {
  const row = await db.deleteFrom('stored_files').where('id', '=', id).returning('storage_key').executeTakeFirst();
  return row?.storage_key;
}
