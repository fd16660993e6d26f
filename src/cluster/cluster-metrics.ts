import { AggregatorRegistry } from 'prom-client';
import { registry } from '../observability/metrics.ts';
import type { WorkerSupervisor } from './worker-supervisor.ts';

type Snapshot = Awaited<ReturnType<typeof registry.getMetricsAsJSON>>;

/** What the primary and its workers say to each other over the IPC channel Bun.spawn opens. */
export type MetricsMessage =
  /** primary → worker: send your registry. */
  | { type: 'metrics:collect'; id: number }
  /** worker → primary: my registry, for that collect. */
  | { type: 'metrics:snapshot'; id: number; metrics: Snapshot }
  /** worker → primary: a scrape landed on me; send me the whole host's text. */
  | { type: 'metrics:ask'; id: number }
  /** primary → worker: the host's text, for that ask. */
  | { type: 'metrics:text'; id: number; text: string };

export function isMetricsMessage(message: unknown): message is MetricsMessage {
  if (typeof message !== 'object' || message === null) return false;
  const { type, id } = message as { type?: unknown; id?: unknown };
  return typeof type === 'string' && type.startsWith('metrics:') && typeof id === 'number';
}

/** A worker that does not answer within this long is left out of that scrape. */
const ANSWER_MS = 2000;

/**
 * `GET /metrics` of a host running several workers (docs/scaling.md): a scrape lands on whichever
 * process accepted its connection, so the primary gathers every process's registry and merges
 * them (counters and histograms summed, gauges as each declares), and a worker asks the primary.
 * One scrape therefore shows the whole host, as a single process would.
 */
export function primaryMetricsText(workers: WorkerSupervisor): () => Promise<string> {
  let seq = 0;
  const waiting = new Map<string, (metrics: Snapshot) => void>();
  const collect = async (): Promise<string> => {
    const id = ++seq;
    const answers = workers.runningSlots().map(
      (slot) =>
        new Promise<Snapshot | undefined>((resolve) => {
          const key = `${slot}:${id}`;
          const timer = setTimeout(() => {
            waiting.delete(key);
            resolve(undefined);
          }, ANSWER_MS);
          waiting.set(key, (metrics) => {
            clearTimeout(timer);
            waiting.delete(key);
            resolve(metrics);
          });
          if (!workers.send(slot, { type: 'metrics:collect', id })) {
            clearTimeout(timer);
            waiting.delete(key);
            resolve(undefined);
          }
        }),
    );
    const snapshots = [await registry.getMetricsAsJSON(), ...(await Promise.all(answers))];
    return AggregatorRegistry.aggregate(snapshots.filter((s): s is Snapshot => s !== undefined)).metrics();
  };
  workers.onMessage((slot, message) => {
    if (!isMetricsMessage(message)) return;
    switch (message.type) {
      case 'metrics:snapshot':
        waiting.get(`${slot}:${message.id}`)?.(message.metrics);
        return;
      case 'metrics:ask':
        void collect()
          .catch(() => registry.metrics())
          .then((text) => workers.send(slot, { type: 'metrics:text', id: message.id, text }))
          // Nothing to send: the worker's own timer answers its scrape with its own figures.
          .catch(() => undefined);
        return;
      case 'metrics:collect':
      case 'metrics:text':
        return; // sent by the primary only
      default: {
        const never: never = message;
        return never;
      }
    }
  });
  return collect;
}

/** The worker's side: answers the primary's collects, and asks it for the host's text on a scrape. */
export function workerMetricsText(): () => Promise<string> {
  const send = process.send?.bind(process);
  if (!send) return () => registry.metrics();
  let seq = 0;
  const waiting = new Map<number, (text: string) => void>();
  process.on('message', (message: unknown) => {
    if (!isMetricsMessage(message)) return;
    if (message.type === 'metrics:collect') {
      void registry
        .getMetricsAsJSON()
        .then((metrics) => send({ type: 'metrics:snapshot', id: message.id, metrics }))
        // The primary leaves this worker out of that scrape after its wait.
        .catch(() => undefined);
    } else if (message.type === 'metrics:text') {
      waiting.get(message.id)?.(message.text);
    }
  });
  return () =>
    new Promise<string>((resolve) => {
      const id = ++seq;
      const done = (text: string) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(text);
      };
      // The primary gone or stuck: this process's own figures beat a failed scrape.
      const timer = setTimeout(
        () =>
          void registry
            .metrics()
            .catch(() => '')
            .then(done),
        ANSWER_MS + 1000,
      );
      waiting.set(id, done);
      try {
        send({ type: 'metrics:ask', id });
      } catch {
        // The channel is closed (the primary is gone): this process's own figures.
        clearTimeout(timer);
        void registry
          .metrics()
          .catch(() => '')
          .then(done);
      }
    });
}
