import { ConfigError } from '../config/config-error.ts';

/** How often a media adapter asks an upstream about a running job. */
export interface PollSchedule {
  /** First wait after submitting. */
  initialMs: number;
  /** Waits grow by half each poll up to this. */
  maxMs: number;
  /** Used instead when the upstream will call back (a webhook): a slow safety net only. */
  webhookSafetyNetMs: number;
}

export const DEFAULT_POLL_SCHEDULE: PollSchedule = { initialMs: 1_000, maxMs: 30_000, webhookSafetyNetMs: 60_000 };

function ms(options: Record<string, unknown>, key: string, path: string): number | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 10)
    throw new ConfigError(`${path}.${key}: expected milliseconds (an integer of at least 10)`);
  return value;
}

/**
 * `poll_interval_ms`, `max_poll_interval_ms`, `webhook_poll_interval_ms` from provider options,
 * each overridable per model; `path` names the options in messages.
 */
export function pollSchedule(layers: { options: Record<string, unknown> | undefined; path: string }[]): PollSchedule {
  const schedule = { ...DEFAULT_POLL_SCHEDULE };
  for (const { options, path } of layers) {
    const o = options ?? {};
    schedule.initialMs = ms(o, 'poll_interval_ms', path) ?? schedule.initialMs;
    schedule.maxMs = ms(o, 'max_poll_interval_ms', path) ?? schedule.maxMs;
    schedule.webhookSafetyNetMs = ms(o, 'webhook_poll_interval_ms', path) ?? schedule.webhookSafetyNetMs;
  }
  schedule.maxMs = Math.max(schedule.maxMs, schedule.initialMs);
  return schedule;
}

/**
 * The wait before poll number `polls` (0 = the first): exponential backoff, never past the job's
 * deadline (so a deadline is noticed on time and the upstream job cancelled promptly).
 */
export function nextPollMs(
  schedule: PollSchedule,
  polls: number,
  opts: { webhook: boolean; startedAt: number; deadlineMs: number },
): number {
  const backoff = opts.webhook
    ? schedule.webhookSafetyNetMs
    : Math.min(schedule.maxMs, schedule.initialMs * 1.5 ** polls);
  const untilDeadline = opts.startedAt + opts.deadlineMs - Date.now() + 50;
  return Math.max(0, Math.round(Math.min(backoff, untilDeadline)));
}

/** Integer milliseconds option (e.g. `deadline_ms`), model options winning over provider options. */
export function msOption(
  key: string,
  layers: { options: Record<string, unknown> | undefined; path: string }[],
): number | undefined {
  let found: number | undefined;
  for (const { options, path } of layers) found = ms(options ?? {}, key, path) ?? found;
  return found;
}
