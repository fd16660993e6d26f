import type { Kysely, Transaction } from 'kysely';
import type { AccountsTable } from './tables/accounts.table.ts';
import type { ApiKeysTable } from './tables/api-keys.table.ts';
import type { CallbackAttemptsTable, WebhookDeliveriesTable } from './tables/callbacks.table.ts';
import type { CustomVoicesTable } from './tables/custom-voices.table.ts';
import type { DeadLettersTable } from './tables/dead-letters.table.ts';
import type { KeyHoldsTable } from './tables/key-holds.table.ts';
import type { LlmReservationsTable } from './tables/llm-reservations.table.ts';
import type { LedgerEntriesTable } from './tables/ledger-entries.table.ts';
import type { LlmResponsesTable } from './tables/llm-responses.table.ts';
import type { ModelRegistryTable } from './tables/model-registry.table.ts';
import type { StoredFilesTable } from './tables/stored-files.table.ts';
import type { TasksTable } from './tables/tasks.table.ts';

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger_entries: LedgerEntriesTable;
  tasks: TasksTable;
  callback_attempts: CallbackAttemptsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  stored_files: StoredFilesTable;
  llm_responses: LlmResponsesTable;
  model_registry: ModelRegistryTable;
  custom_voices: CustomVoicesTable;
  llm_reservations: LlmReservationsTable;
  dead_letters: DeadLettersTable;
  key_holds: KeyHoldsTable;
}

export type Db = Kysely<Database>;
/** Repository functions take either; a transaction is a Kysely too. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>;
