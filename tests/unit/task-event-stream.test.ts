import { expect, test } from 'bun:test';
import { createParser } from 'eventsource-parser';
import { type TaskRecord, taskEventStream } from '../../src/tasks/task-event-stream.ts';

/** A task source the test drives: `set` changes the record, `notify` fires the watchers. */
function fakeSource(initial: TaskRecord | undefined, heartbeatMs = 60_000) {
  let record = initial;
  let reads = 0;
  let readDelayMs = 0;
  const watchers = new Set<() => void>();
  const abort = new AbortController();
  return {
    source: {
      async read() {
        reads++;
        if (readDelayMs) await Bun.sleep(readDelayMs);
        return record;
      },
      async watch(onChange: () => void) {
        watchers.add(onChange);
        return () => watchers.delete(onChange);
      },
      heartbeatMs,
      signal: abort.signal,
    },
    set: (next: TaskRecord | undefined) => {
      record = next;
    },
    notify: () => {
      for (const w of watchers) w();
    },
    slowReads: (ms: number) => {
      readDelayMs = ms;
    },
    reads: () => reads,
    watchers: () => watchers.size,
    abort: () => abort.abort(),
  };
}

/** Reads the stream as a client would, with eventsource-parser. */
function collect(stream: ReadableStream<Uint8Array>) {
  const events: Array<{ event?: string; data: string }> = [];
  let comments = 0;
  const parser = createParser({
    onEvent: (e) => events.push({ event: e.event, data: e.data }),
    onComment: () => comments++,
  });
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) parser.feed(decoder.decode(chunk, { stream: true }));
  })();
  return { events, done, comments: () => comments };
}

test('the record at once, again only when it changed, and the end right after a terminal status', async () => {
  const f = fakeSource({ status: 'processing', n: 1 } as TaskRecord);
  const out = collect(taskEventStream(f.source));
  await Bun.sleep(20);
  expect(out.events).toEqual([{ event: 'status', data: '{"status":"processing","n":1}' }]);
  f.notify(); // nothing changed: nothing sent
  await Bun.sleep(20);
  expect(out.events).toHaveLength(1);
  f.set({ status: 'completed', n: 2 } as TaskRecord);
  f.notify();
  await out.done;
  expect(out.events.map((e) => JSON.parse(e.data).status)).toEqual(['processing', 'completed']);
  expect(f.watchers()).toBe(0);
});

test('a finished task: its record and the end at once', async () => {
  const f = fakeSource({ status: 'cancelled' });
  const out = collect(taskEventStream(f.source));
  await out.done;
  expect(out.events).toEqual([{ event: 'status', data: '{"status":"cancelled"}' }]);
  expect(f.watchers()).toBe(0);
});

test('notices arriving during a read are folded into one more read', async () => {
  const f = fakeSource({ status: 'processing' });
  const out = collect(taskEventStream(f.source));
  await Bun.sleep(20);
  f.slowReads(50);
  const before = f.reads();
  for (let i = 0; i < 10; i++) f.notify();
  await Bun.sleep(200);
  expect(f.reads() - before).toBe(2);
  f.abort();
  await out.done;
});

test('heartbeats are comments, and each one re-reads the task (a lost notice costs one beat)', async () => {
  const f = fakeSource({ status: 'processing' }, 30);
  const out = collect(taskEventStream(f.source));
  await Bun.sleep(100);
  expect(out.comments()).toBeGreaterThanOrEqual(2);
  expect(out.events).toHaveLength(1);
  f.set({ status: 'failed' }); // no notice at all
  await out.done;
  expect(out.events.map((e) => JSON.parse(e.data).status)).toEqual(['processing', 'failed']);
});

test('the client leaving, or the task vanishing, ends the stream and the watch', async () => {
  const left = fakeSource({ status: 'processing' });
  const a = collect(taskEventStream(left.source));
  await Bun.sleep(20);
  left.abort();
  await a.done;
  expect(left.watchers()).toBe(0);

  const gone = fakeSource({ status: 'processing' });
  const b = collect(taskEventStream(gone.source));
  await Bun.sleep(20);
  gone.set(undefined);
  gone.notify();
  await b.done;
  expect(b.events).toHaveLength(1);
  expect(gone.watchers()).toBe(0);
});
