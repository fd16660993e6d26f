import { spendRows } from '../accounts/ledger.repository.ts';
import type { DbOrTrx } from '../db/database.ts';

export const SPEND_CATEGORIES = ['llm', 'embedding', 'image', 'video', 'audio'] as const;
export type SpendDay = { day: string } & Record<(typeof SPEND_CATEGORIES)[number], number>;

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Spend per UTC day and category over the last `days` days (today included), oldest first, one
 * entry per day even when nothing was spent: charges minus refunds from the ledger, so a failed
 * task nets to zero and an unused `max_sequential_images` ceiling is not counted. Top-ups and
 * adjustments are not spend.
 */
export async function spendByDay(db: DbOrTrx, accountId: number, days: number, now = Date.now()): Promise<SpendDay[]> {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const since = today - (days - 1) * DAY_MS;
  const rows = await spendRows(db, accountId, new Date(since));

  const byDay = new Map<string, SpendDay>();
  for (let at = since; at <= today; at += DAY_MS) {
    const day = utcDay(at);
    byDay.set(day, { day, llm: 0, embedding: 0, image: 0, video: 0, audio: 0 });
  }
  for (const row of rows) {
    const entry = byDay.get(row.day);
    const category = row.category as (typeof SPEND_CATEGORIES)[number] | null;
    if (entry && category && SPEND_CATEGORIES.includes(category)) entry[category] = Number(row.spent);
  }
  return [...byDay.values()];
}
