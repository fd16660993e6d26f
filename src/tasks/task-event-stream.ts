/** A task record as `GET /v1/tasks/{id}` shows it; only its `status` matters here. */
export interface TaskRecord {
  status: string;
}

export interface TaskEventSource {
  /** The task's record now, or undefined once it is gone. */
  read(): Promise<TaskRecord | undefined>;
  /** Calls `onChange` whenever the task may have changed; resolves with the unsubscribe. */
  watch(onChange: () => void): Promise<() => void>;
  heartbeatMs: number;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Called once when the stream has ended, however it ended. */
  onEnd?: () => void;
}

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

const encoder = new TextEncoder();
const statusEvent = (json: string) => encoder.encode(`event: status\ndata: ${json}\n\n`);
/** A comment line: ignored by SSE parsers, but it keeps proxies and idle timers from closing the stream. */
const HEARTBEAT = encoder.encode(': heartbeat\n\n');

/**
 * `GET /v1/tasks/{id}/events` (docs/api-contract.md, "Live task status"): `event: status` with the
 * task record at once and on every change, a heartbeat comment every `heartbeatMs`, and the end
 * of the stream right after a terminal status. The watch is set up before the first read, so no
 * change can fall between the two; each change notice and each heartbeat re-reads the record and
 * sends it only when it differs from the last one sent. Reads never overlap: notices arriving
 * during a read cause one more read after it.
 */
export function taskEventStream(source: TaskEventSource): ReadableStream<Uint8Array> {
  let last: string | undefined;
  let closed = false;
  let reading = false;
  let again = false;
  let unwatch: (() => void) | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;

  let onAbort: (() => void) | undefined;
  let ended = false;
  const stop = () => {
    if (!ended) {
      ended = true;
      source.onEnd?.();
    }
    closed = true;
    unwatch?.();
    if (heartbeat) clearInterval(heartbeat);
    if (onAbort) source.signal.removeEventListener('abort', onAbort);
  };

  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const finish = () => {
        if (closed) return;
        stop();
        controller.close();
      };
      const refresh = async (): Promise<void> => {
        if (closed) return;
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        try {
          do {
            again = false;
            const record = await source.read();
            if (closed) return;
            if (!record) return finish();
            const json = JSON.stringify(record);
            if (json !== last) {
              last = json;
              controller.enqueue(statusEvent(json));
            }
            if (TERMINAL_STATUSES.has(record.status)) return finish();
          } while (again);
        } catch (err) {
          if (!closed) {
            stop();
            controller.error(err);
          }
        } finally {
          reading = false;
        }
      };

      // The client left, or the instance is shutting down: end the stream (a client reconnects elsewhere).
      onAbort = finish;
      if (source.signal.aborted) return finish();
      source.signal.addEventListener('abort', onAbort);
      unwatch = await source.watch(() => void refresh());
      if (closed) return unwatch();
      heartbeat = setInterval(() => {
        if (closed) return;
        controller.enqueue(HEARTBEAT);
        void refresh();
      }, source.heartbeatMs);
      await refresh();
    },
    cancel() {
      stop();
    },
  });
}
