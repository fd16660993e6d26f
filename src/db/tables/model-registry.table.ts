import type { CreatedAt } from './accounts.table.ts';

/** First time each catalog model was seen: the model object's `added`. */
export interface ModelRegistryTable {
  id: string;
  added_at: CreatedAt;
}
