import { createParser } from 'eventsource-parser';
import type { GatewayProcess } from './gateway-process.ts';

/** One open `GET /v1/tasks/{id}/events` stream, decoded by eventsource-parser as it arrives. */
export interface TaskEventsClient {
  status: number;
  headers: Headers;
  /** The `data` of every `event: status`, parsed, in order. */
  records: any[];
  /** Every other event's name (there should be none). */
  otherEvents: string[];
  /** Heartbeat comments received. */
  heartbeats: number;
  /** Resolves when the server ends the stream; rejects when it breaks. */
  ended: Promise<void>;
  /** Resolves once `predicate` holds for the records received so far. */
  waitFor(predicate: (records: any[]) => boolean, timeoutMs?: number): Promise<any[]>;
  close(): void;
}

export async function openTaskEvents(
  gw: GatewayProcess | string,
  key: string,
  taskId: string,
): Promise<TaskEventsClient> {
  const base = typeof gw === 'string' ? gw : gw.url;
  const abort = new AbortController();
  const res = await fetch(`${base}/v1/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    signal: abort.signal,
  });
  const wakers = new Set<() => void>();
  const client: TaskEventsClient = {
    status: res.status,
    headers: res.headers,
    records: [],
    otherEvents: [],
    heartbeats: 0,
    ended: Promise.resolve(),
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(client.records)) {
        if (Date.now() > deadline)
          throw new Error(`task events: condition not met in ${timeoutMs} ms; got ${JSON.stringify(client.records)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 100);
          wakers.add(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return client.records;
    },
    close: () => abort.abort(),
  };
  if (res.status !== 200 || !res.body) return client;
  const parser = createParser({
    onEvent(event) {
      if (event.event === 'status') client.records.push(JSON.parse(event.data));
      else client.otherEvents.push(event.event ?? 'message');
      for (const wake of [...wakers]) wake();
      wakers.clear();
    },
    onComment(comment) {
      if (comment.trim() === 'heartbeat') client.heartbeats++;
    },
  });
  const body = res.body;
  client.ended = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
  })();
  client.ended.catch(() => undefined);
  return client;
}
