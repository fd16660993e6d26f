import type { UsdUnits } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { grantKeyHold, type KeyHoldResult, releaseKeyHolds, renewKeyHolds } from './key-holds.repository.ts';

export interface KeyBudgetOptions {
  /** A hold not renewed for this long is released by any instance's sweeper (its instance died). */
  ttlMs?: number;
  /** How often this instance renews its open holds and sweeps expired ones. */
  tickMs?: number;
}

/**
 * LLM holds on key budgets (docs/keys.md). A call of a key that has a budget holds its worst
 * case on the key with one statement at admission (keys without a budget pay nothing); the
 * settlement statement that charges the account deletes the hold and adds the real charge to the
 * key's spend (src/llm/llm-settlement.repository.ts). Open holds are renewed while their calls run,
 * so a hold outlives its instance only until it expires.
 */
export class KeyBudgets {
  private readonly open = new Set<string>();
  private timer?: ReturnType<typeof setInterval>;
  private readonly ttlMs: number;
  private readonly tickMs: number;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    opts: KeyBudgetOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.tickMs = opts.tickMs ?? 30_000;
  }

  async reserve(keyId: number, units: UsdUnits): Promise<KeyHoldResult> {
    const result = await grantKeyHold(this.db, keyId, units, this.ttlMs);
    if (result.ok && result.id) this.open.add(result.id);
    return result;
  }

  /** The call ended without a settlement: its hold goes back to the key now. */
  async release(id: string): Promise<void> {
    this.open.delete(id);
    try {
      await releaseKeyHolds(this.db, { ids: [id] });
    } catch (err) {
      // Not lost: the hold is no longer renewed, so the sweeper releases it when it expires.
      this.log.error('key hold release failed', { hold: id, ...errorFields(err) });
    }
  }

  /** The settlement deleted the hold (or, if it could not be written, the sweeper will). */
  settled(id: string): void {
    this.open.delete(id);
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async tick(): Promise<void> {
    try {
      await renewKeyHolds(this.db, [...this.open], this.ttlMs);
      await releaseKeyHolds(this.db, { expired: true });
    } catch (err) {
      this.log.error('key hold renew/sweep failed', errorFields(err));
    }
  }
}
