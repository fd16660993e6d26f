import type { EmbeddedResult, WorkerReply, WorkerRequest } from './pglite-messages.ts';

type Pending = { resolve(reply: WorkerReply & { ok: true }): void; reject(err: Error): void };
type Body<T> = T extends unknown ? Omit<T, 'id'> : never;

/**
 * The main thread's handle on the embedded database: PGlite runs in a Bun Worker
 * (pglite-worker.ts) and statements go to it as messages, so the request thread does HTTP while
 * Postgres works. Rows and parameters cross by structured clone (dates, numbers, JSON values and
 * arrays survive it as they are); a Postgres error comes back as an Error with its fields
 * (`code`, `detail`, `constraint`…), so db-errors.ts reads it as it reads node-postgres's.
 */
export class PGliteClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private dead: string | undefined;

  private constructor(private readonly worker: Worker) {
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const reply = event.data;
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply);
      else waiting.reject(Object.assign(new Error(reply.message), reply.fields));
    };
    // A worker that died took the database with it: every call from then on fails at once
    // (readyz answers 503) instead of waiting for an answer that cannot come.
    worker.addEventListener('error', (event) => this.fail(`embedded database worker failed: ${event.message}`));
    worker.addEventListener('close', () => this.fail('embedded database worker exited'));
  }

  /** Starts the worker and opens the cluster in `dir` (which must already hold one, or PGlite runs initdb). */
  static async open(dir: string): Promise<PGliteClient> {
    const client = new PGliteClient(
      new Worker(new URL('./pglite-worker.ts', import.meta.url).href, { name: 'embedded-database' }),
    );
    await client.send({ op: 'open', dir });
    return client;
  }

  async query<R>(sql: string, params: readonly unknown[]): Promise<EmbeddedResult<R>> {
    const reply = await this.send({ op: 'query', sql, params: [...params] });
    return { rows: reply.rows as R[], affectedRows: reply.affectedRows };
  }

  async prepared<R>(name: string, sql: string, params: readonly unknown[]): Promise<R[]> {
    return (await this.send({ op: 'prepared', name, sql, params: [...params] })).rows as R[];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (!this.dead) await this.send({ op: 'close' });
    this.closed = true;
    this.worker.terminate();
  }

  private send(body: Body<WorkerRequest>): Promise<WorkerReply & { ok: true }> {
    if (this.closed) return Promise.reject(new Error('the embedded database is closed'));
    if (this.dead) return Promise.reject(new Error(this.dead));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.worker.postMessage({ ...body, id } as WorkerRequest);
      } catch (err) {
        // A parameter structured clone cannot carry (a function, say): this call fails, alone.
        this.pending.delete(id);
        reject(err);
      }
    });
  }

  private fail(reason: string): void {
    this.dead ??= reason;
    for (const waiting of this.pending.values()) waiting.reject(new Error(reason));
    this.pending.clear();
  }
}
