import { tooManyRequests } from '../http/errors.ts';
import type { Store } from '../store/store.ts';
import { DailyByteMeter } from './daily-byte-meter.ts';
import { formatBytes, type UploadPlan } from './upload-plan.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Counters outlive their window a little, so a clock skew between instances cannot reset one early. */
const EXPIRY_SLACK_MS = 5_000;

/**
 * Per-account upload limits, counted in the shared store so they hold across instances: uploads
 * per fixed UTC minute (`upload:count:<account>:<minute>`), bytes per UTC day
 * (`upload:bytes:<account>:<yyyy-mm-dd>`). Every admitted attempt counts toward the minute; the
 * day counts the bytes of uploads that were stored.
 */
export class UploadQuota {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one upload; throws a 429 (Retry-After = end of the window) when a limit is reached. */
  async admit(accountId: number, plan: UploadPlan): Promise<DailyByteMeter> {
    const now = this.now();
    const minute = Math.floor(now / MINUTE_MS);
    const minuteEnd = (minute + 1) * MINUTE_MS;
    const count = await this.store.incr(`upload:count:${accountId}:${minute}`, 1, minuteEnd - now + EXPIRY_SLACK_MS);
    if (count > plan.uploadsPerMinute) {
      throw tooManyRequests(
        `upload limit reached: ${plan.uploadsPerMinute} uploads per minute`,
        (minuteEnd - now) / 1000,
      );
    }

    const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    const dayEnd = dayStart + DAY_MS;
    const key = `upload:bytes:${accountId}:${new Date(dayStart).toISOString().slice(0, 10)}`;
    const used = Number((await this.store.get(key)) ?? 0);
    const overBudget = (message: string) => tooManyRequests(message, (dayEnd - this.now()) / 1000);
    if (used >= plan.bytesPerDay)
      throw overBudget(`daily upload volume of ${formatBytes(plan.bytesPerDay)} used up; it resets at 00:00 UTC`);
    return new DailyByteMeter(this.store, {
      key,
      budget: plan.bytesPerDay,
      used,
      ttlMs: dayEnd - now + EXPIRY_SLACK_MS,
      overBudget: () =>
        overBudget(
          `upload stopped: it would exceed the daily upload volume of ${formatBytes(plan.bytesPerDay)}; it resets at 00:00 UTC`,
        ),
    });
  }
}
