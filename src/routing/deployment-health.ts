import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import type { Store } from '../store/store.ts';
import type { Deployment } from './routing-table.ts';

/** Consecutive failures (connect error, timeout, 429, 5xx) after which a deployment cools down. */
export const FAILURES_BEFORE_COOLDOWN = 3;
const CHANNEL = 'routing:health';
const failKey = (key: string) => `routing:fails:${key}`;
const coolKey = (key: string) => `routing:cool:${key}`;

interface State {
  failures: number;
  lastFailedAt: number;
  /** Epoch ms until which the deployment is skipped; 0 when it is not cooling down. */
  coolUntil: number;
  lastError: string;
}

/** What one instance broadcasts after a deployment's failure or recovery. */
interface HealthMessage {
  k: string;
  f: number;
  at: number;
  u: number;
  e: string;
}

export interface DeploymentState {
  state: 'ok' | 'degraded' | 'cooling_down';
  consecutive_failures: number;
  cooling_down_until?: string;
  last_error?: string;
}

/**
 * Deployment health shared by every instance: the failure count lives in the store (one atomic
 * counter per deployment), and each change is broadcast on the store's pub/sub so that every
 * instance keeps the same view in memory. Selection reads only that memory: no store round trip on
 * the request path. A success after failures resets the count everywhere; once a cooldown has
 * passed the deployment is tried again, and one more failure cools it down again.
 */
export class DeploymentHealth {
  private readonly states = new Map<string, State>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Subscribes to the other instances' changes and loads the cooldowns already running. */
  async start(deployments: readonly Deployment[]): Promise<void> {
    this.unsubscribe = await this.store.subscribe(CHANNEL, (text) => this.apply(text));
    await Promise.all(
      deployments.map(async (d) => {
        const [since, left] = await Promise.all([this.store.get(coolKey(d.key)), this.store.ttl(coolKey(d.key))]);
        if (since === null || left <= 0) return;
        this.states.set(d.key, {
          failures: FAILURES_BEFORE_COOLDOWN,
          lastFailedAt: Number(since) || this.now(),
          coolUntil: this.now() + left,
          lastError: 'failing (seen by another instance)',
        });
      }),
    );
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
  }

  coolingDown(d: Deployment, now = this.now()): boolean {
    const state = this.states.get(d.key);
    return state !== undefined && state.coolUntil > now;
  }

  /** When the deployment last failed (0: never, as far as this instance knows). */
  lastFailedAt(d: Deployment): number {
    return this.states.get(d.key)?.lastFailedAt ?? 0;
  }

  /** Counts a failure of the provider's making; the third in a row starts a cooldown on every instance. */
  async failed(d: Deployment, error: string): Promise<void> {
    const at = this.now();
    try {
      const failures = await this.store.incr(failKey(d.key), 1, Math.max(600_000, 2 * d.cooldownMs));
      const previous = this.states.get(d.key);
      const coolUntil = failures >= FAILURES_BEFORE_COOLDOWN ? at + d.cooldownMs : (previous?.coolUntil ?? 0);
      if (failures >= FAILURES_BEFORE_COOLDOWN) await this.store.set(coolKey(d.key), String(at), d.cooldownMs);
      await this.broadcast({ k: d.key, f: failures, at, u: coolUntil, e: error.slice(0, 300) });
    } catch (err) {
      // The store is down: keep counting on this instance alone rather than fail the call.
      this.log.warn('deployment health not shared', { deployment: d.key, ...errorFields(err) });
      const state = this.states.get(d.key);
      const failures = (state?.failures ?? 0) + 1;
      this.set({
        k: d.key,
        f: failures,
        at,
        u: failures >= FAILURES_BEFORE_COOLDOWN ? at + d.cooldownMs : 0,
        e: error.slice(0, 300),
      });
    }
  }

  /** A served call: resets the count, but only touches the store when there was one to reset. */
  succeeded(d: Deployment): void {
    if (!this.states.has(d.key)) return;
    this.states.delete(d.key);
    void Promise.all([this.store.del(failKey(d.key)), this.store.del(coolKey(d.key))])
      .then(() => this.broadcast({ k: d.key, f: 0, at: 0, u: 0, e: '' }))
      .catch((err) => this.log.warn('deployment recovery not shared', { deployment: d.key, ...errorFields(err) }));
  }

  /** For `/readyz` and the dashboard. */
  stateOf(d: Deployment): DeploymentState {
    const state = this.states.get(d.key);
    if (!state) return { state: 'ok', consecutive_failures: 0 };
    const cooling = state.coolUntil > this.now();
    return {
      state: cooling ? 'cooling_down' : 'degraded',
      consecutive_failures: state.failures,
      ...(cooling ? { cooling_down_until: new Date(state.coolUntil).toISOString() } : {}),
      last_error: state.lastError,
    };
  }

  private async broadcast(message: HealthMessage): Promise<void> {
    this.set(message);
    await this.store.publish(CHANNEL, JSON.stringify(message));
  }

  private apply(text: string): void {
    try {
      const m = JSON.parse(text) as HealthMessage;
      if (typeof m.k === 'string' && typeof m.f === 'number') this.set(m);
    } catch {
      // not ours: ignored
    }
  }

  private set(m: HealthMessage): void {
    if (m.f === 0) {
      this.states.delete(m.k);
      return;
    }
    const previous = this.states.get(m.k);
    // Messages may arrive out of order: keep the highest count and the latest cooldown.
    this.states.set(m.k, {
      failures: Math.max(m.f, previous?.failures ?? 0),
      lastFailedAt: Math.max(m.at, previous?.lastFailedAt ?? 0),
      coolUntil: Math.max(m.u, previous?.coolUntil ?? 0),
      lastError: m.e || previous?.lastError || '',
    });
  }
}
