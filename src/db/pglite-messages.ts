/** What the main thread and the embedded database's worker (pglite-worker.ts) say to each other. */
export type WorkerRequest =
  | { id: number; op: 'open'; dir: string }
  | { id: number; op: 'query'; sql: string; params: unknown[] }
  | { id: number; op: 'prepared'; name: string; sql: string; params: unknown[] }
  | { id: number; op: 'close' };

export type WorkerReply =
  | { id: number; ok: true; rows: unknown[]; affectedRows?: number }
  | { id: number; ok: false; message: string; fields: Record<string, unknown> };

/** The result of one statement as the dialect reads it. */
export interface EmbeddedResult<R> {
  rows: R[];
  affectedRows?: number;
}
