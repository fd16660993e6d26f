import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { ClaimLoop } from '../ops/claim-loop.ts';
import {
  ACCOUNTS_PER_CLAIM,
  accountsWithPending,
  type ClaimedDelivery,
  claimDeliveries,
  fillMissingAccounts,
} from './deliveries.repository.ts';
import { DELIVERY_LEASE_MS } from './delivery-policy.ts';
import { type DeliveryResult, recordResults } from './delivery-results.ts';
import { webhookHeaders, webhookMessageId } from './webhook-signature.ts';
import { observeDelivery } from '../observability/webhook-observer.ts';

/** POSTs one webhook (no redirects, private targets refused at send time); throws when no HTTP answer came. */
export type SendWebhook = (
  url: string,
  body: string,
  headers: Record<string, string>,
) => Promise<{ status: number; statusText: string }>;

export interface DelivererOptions {
  instanceId: string;
  retryDelaysSec: number[];
  /** Deliveries in flight at once on this instance. */
  concurrency?: number;
  leaseMs?: number;
  idleMs?: number;
}

/**
 * Webhook deliveries, scheduled as rows in Postgres and claimed like tasks (`SKIP LOCKED` and a
 * lease), so every due delivery is made at least once whichever instance is alive. Sends run
 * concurrently; their results are written in small batches (log entry, done mark, next retry)
 * so one slow receiver never holds up the others.
 */
export class WebhookDeliverer {
  private readonly loop: ClaimLoop<ClaimedDelivery>;
  private results: DeliveryResult[] = [];
  private flushTimer?: ReturnType<typeof setTimeout>;
  private flushing: Promise<void> = Promise.resolve();
  private accountsFilledAt = 0;
  /** Where the next claim's walk over accounts starts (accountsWithPending). */
  private accountsAfter = 0;

  constructor(
    private readonly db: Db,
    private readonly send: SendWebhook,
    private readonly log: Logger,
    private readonly opts: DelivererOptions,
  ) {
    this.loop = new ClaimLoop({
      name: 'webhook',
      concurrency: opts.concurrency ?? 256,
      maxClaim: 500,
      idleMs: opts.idleMs,
      claim: (limit) => this.claim(limit),
      run: async (delivery) => this.queueResult(await this.attempt(delivery)),
      log,
    });
  }

  start(): void {
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    // Rows an instance from before migration 0015 scheduled get their account, at most every 10 s.
    if (Date.now() - this.accountsFilledAt > 10_000) {
      this.accountsFilledAt = Date.now();
      await fillMissingAccounts(this.db);
    }
    // The accounts with pending deliveries, ACCOUNTS_PER_CLAIM at a time, from where the last
    // claim stopped (round and round): a claim's cost is bounded however many accounts wait.
    let accounts = await accountsWithPending(this.db, this.accountsAfter);
    if (accounts.length === 0 && this.accountsAfter > 0) accounts = await accountsWithPending(this.db, 0);
    this.accountsAfter = accounts.length === ACCOUNTS_PER_CLAIM ? (accounts.at(-1) ?? 0) : 0;
    if (accounts.length === 0) return [];
    return claimDeliveries(this.db, this.opts.instanceId, this.opts.leaseMs ?? DELIVERY_LEASE_MS, {
      due: limit,
      accounts,
    });
  }

  /** One POST, signed afresh with the account's current secret, observed (metrics, span). Never throws. */
  private attempt(delivery: ClaimedDelivery): Promise<DeliveryResult> {
    return observeDelivery(delivery, () => this.sendSigned(delivery));
  }

  private async sendSigned(delivery: ClaimedDelivery): Promise<DeliveryResult> {
    const sentAt = new Date();
    if (!delivery.callback_url) return { delivery, sentAt, status: 0, statusText: 'the task has no callback_url' };
    const body = JSON.stringify(delivery.payload);
    const headers = webhookHeaders(
      body,
      { id: webhookMessageId(delivery.task_id) },
      { enabled: delivery.webhook_signing_enabled, secret: delivery.webhook_secret },
      sentAt.getTime(),
    );
    try {
      const res = await this.send(delivery.callback_url, body, headers);
      return { delivery, sentAt, status: res.status, statusText: res.statusText };
    } catch (err) {
      return { delivery, sentAt, status: 0, statusText: (err as Error).message || String(err) };
    }
  }

  private queueResult(result: DeliveryResult): void {
    this.results.push(result);
    this.flushTimer ??= setTimeout(() => void this.flush(), 5);
  }

  /** Writes the queued results; on a database error they are kept and written later. */
  async flush(): Promise<void> {
    this.flushTimer = undefined;
    this.flushing = this.flushing.then(async () => {
      const batch = this.results.splice(0);
      if (batch.length === 0) return;
      try {
        const dues = await this.db.transaction().execute((trx) => recordResults(trx, batch, this.opts.retryDelaysSec));
        for (const due of dues) this.loop.wakeAt(due - Date.now());
      } catch (err) {
        this.log.error('webhook results write failed; will retry', { results: batch.length, ...errorFields(err) });
        this.results.unshift(...batch);
        this.flushTimer ??= setTimeout(() => void this.flush(), 1000);
      }
    });
    return this.flushing;
  }

  /**
   * Sends a delivery this instance just scheduled (manual redelivery) and writes its result
   * before returning it. Were the process to die first, the delivery stays pending and is made
   * by whichever instance claims it.
   */
  async deliverNow(deliveryId: number): Promise<DeliveryResult | undefined> {
    const [delivery] = await claimDeliveries(this.db, this.opts.instanceId, this.opts.leaseMs ?? DELIVERY_LEASE_MS, {
      id: deliveryId,
    });
    if (!delivery) return undefined;
    const result = await this.attempt(delivery);
    await this.db.transaction().execute((trx) => recordResults(trx, [result], this.opts.retryDelaysSec));
    return result;
  }

  async stop(): Promise<void> {
    this.loop.stop();
    await this.loop.settled();
    // In-flight sends end within their 10 s timeout; their results are written before we go.
    const deadline = Date.now() + 11_000;
    while (this.loop.running > 0 && Date.now() < deadline) await Bun.sleep(20);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    await this.flush();
  }
}
