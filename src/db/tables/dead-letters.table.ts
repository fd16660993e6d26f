import type { Generated, Selectable } from 'kysely';
import type { CreatedAt } from './accounts.table.ts';

/** A record a batch writer could not write even on its own, kept for an operator to inspect. */
export interface DeadLettersTable {
  id: Generated<number>;
  /** Which writer set it aside: `llm_usage`, … */
  kind: string;
  /** The record as JSON text (escaped, so any content fits a text column). */
  payload: string;
  error: string;
  created_at: CreatedAt;
}

export type DeadLetterRow = Selectable<DeadLettersTable>;
