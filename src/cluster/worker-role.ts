import { availableParallelism } from 'node:os';
import { ConfigError } from '../config/config-error.ts';

/**
 * The marker the primary sets on the processes it spawns (docs/scaling.md): the worker's slot,
 * 1 … WORKERS-1. Unset (or empty) in the process an operator starts, which is the primary (0).
 * Not an operator setting: the primary overwrites it on every worker it spawns.
 */
export const WORKER_INDEX_ENV = 'GATEWAY_WORKER_INDEX';

/** 0 for the primary, the slot number for a spawned worker. */
export function readWorkerIndex(source: Record<string, string | undefined>): number {
  const raw = source[WORKER_INDEX_ENV];
  if (raw === undefined || raw === '') return 0;
  if (!/^[1-9]\d{0,3}$/.test(raw)) {
    throw new ConfigError(`invalid environment: ${WORKER_INDEX_ENV}: set by the primary process only (got "${raw}")`);
  }
  return Number(raw);
}

/**
 * How many processes serve the port. `WORKERS` when set; otherwise one per core when the
 * database and the store are shared services (Postgres and Redis), else 1: PGlite lives inside
 * one process, and the in-process store cannot tell other processes that a key was revoked.
 * An explicit `WORKERS` above 1 without them is refused rather than lowered, so an operator who
 * asked for several processes is never given one silently.
 */
export function resolveWorkers(
  requested: number | undefined,
  shared: { databaseUrl?: string; redisUrl?: string },
  cores: number = availableParallelism(),
): number {
  if (requested === undefined) return shared.databaseUrl && shared.redisUrl ? Math.max(1, cores) : 1;
  if (requested > 1 && !shared.databaseUrl) {
    throw new ConfigError(
      `invalid environment: WORKERS=${requested} needs DATABASE_URL: the embedded database (PGlite) belongs to one process; set DATABASE_URL to a Postgres server or WORKERS=1`,
    );
  }
  if (requested > 1 && !shared.redisUrl) {
    throw new ConfigError(
      `invalid environment: WORKERS=${requested} needs REDIS_URL: the in-process store cannot reach other processes (key revocations, rate limits); set REDIS_URL or WORKERS=1`,
    );
  }
  return requested;
}

/**
 * Calls `onGone` once when the process that spawned this one is gone (the worker was re-parented):
 * a primary killed with SIGKILL cannot forward a signal, and its workers must not serve on alone.
 */
export function watchParent(onGone: () => void, everyMs = 1000): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
