import type { Task } from './types.ts';

/**
 * Follows a task live over `GET /v1/tasks/{id}/events` (docs/api-contract.md, "Live task
 * status"), authenticated by the session cookie: `onTask` gets the record at once and on every
 * change. Resolves with the last record once it is terminal, when the stream fails for good
 * (the session ended), or when the view is left. The stream's end is not waited for: a browser's
 * EventSource would reconnect after it, so it is closed on the terminal status itself.
 */
export function followTask(id: string, signal: AbortSignal, onTask: (task: Task) => void): Promise<Task | undefined> {
  return new Promise((resolve) => {
    const source = new EventSource(`/v1/tasks/${encodeURIComponent(id)}/events`);
    let last: Task | undefined;
    const done = () => {
      source.close();
      signal.removeEventListener('abort', done);
      resolve(last);
    };
    source.addEventListener('status', (event) => {
      last = JSON.parse((event as MessageEvent<string>).data) as Task;
      onTask(last);
      if (last.status !== 'processing') done();
    });
    // A dropped connection is retried by EventSource itself (any instance may answer); only an
    // answer that is not a stream (401, 404) closes it for good.
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) done();
    });
    if (signal.aborted) done();
    else signal.addEventListener('abort', done);
  });
}
