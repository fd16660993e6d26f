/**
 * What the gateway's own stream work costs per streamed call, in process and without a socket:
 * the zero-latency fake upstream's chat-completions stream (role chunk, `--deltas` content
 * deltas, finish, usage, `[DONE]`, all in one read as the fake sends it) through
 * `awaitFirstEvent` and `clientStream`, read to its end. Prints a Markdown table (figures, not a
 * test).
 *
 *   bun run bench/stream-pipeline.ts [--streams 20000] [--rounds 3] [--deltas 20] [--alloc]
 *
 * Cases: a chat client on the chat upstream (passed through: forwarded, with the billing decoder
 * reading the same events) and a Messages client on it (translated: decoded and re-encoded),
 * each with the stream in one read and with one read per event (as a real LLM's tokens arrive,
 * though here with no wait between them: the cost of the reads themselves, not of waking up).
 * The charge is a resolved promise, so only the pipeline's CPU is counted. Rounds alternate the
 * cases so both see the same minutes of a shared machine; pin it (`taskset -c 1`) for steadier
 * figures. The socket-level figures are bench/hot-path.ts's.
 *
 * `--alloc` also prints the heap bytes each case allocates per stream: the case runs alone in a
 * child process with JavaScriptCore's GC log on (`BUN_JSC_logGC=1`), and the bytes each
 * collection reports as allocated since the last one are summed (the cycle still open at the end
 * is not counted, so the figure is a slight undercount). Allocation is what the collector pays
 * for later, on the same thread.
 */
import type { LlmStream } from '../providers/types.ts';
import type { ClientFormat, EncodeContext } from '../src/llm/client-format.ts';
import { awaitFirstEvent } from '../src/llm/first-event.ts';
import { anthropicMessagesFormat } from '../src/llm/formats/anthropic-messages-format.ts';
import { chatCompletionsFormat } from '../src/llm/formats/chat-completions-format.ts';
import { OutcomeTap } from '../src/llm/outcome-tap.ts';
import { clientStream } from '../src/llm/stream-pipeline.ts';
import { streamEvents } from './lib/fake-chat-stream.ts';
import { median } from './lib/h2load.ts';
import { table } from './lib/wrk.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';
import { heapAllocated } from './lib/gc-log.ts';

const STREAMS = numberArg('--streams', 20_000);
const ROUNDS = numberArg('--rounds', 3);
const DELTAS = numberArg('--deltas', 20);

/** The fake upstream's stream (bench/lib/fake-openai-upstream.ts), as one read or one read per event. */
const events = streamEvents('bench', DELTAS);
const encoder = new TextEncoder();
const eventBytes = [events.first, ...events.deltas, ...events.tail].map((e) => encoder.encode(e));
const upstreamBytes = encoder.encode([events.first, ...events.deltas, ...events.tail].join(''));

const upstream = (perEvent: boolean): LlmStream => {
  let next = 0;
  return {
    kind: 'wire',
    format: 'chat-completions',
    warnings: [],
    body: perEvent
      ? // Each event a read of its own, as a real LLM's tokens arrive (no timer: the reads' own cost).
        new ReadableStream<Uint8Array>({
          pull(controller) {
            const bytes = eventBytes[next++];
            if (bytes) controller.enqueue(bytes);
            else controller.close();
          },
        })
      : new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(upstreamBytes);
            controller.close();
          },
        }),
  };
};

const clientBody = { model: 'fake/bench', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] };
const cases: Array<{ name: string; format: ClientFormat; perEvent: boolean }> = [
  { name: 'chat client, passed through', format: chatCompletionsFormat, perEvent: false },
  { name: 'Messages client, translated', format: anthropicMessagesFormat, perEvent: false },
  { name: 'chat client, passed through, a read per event', format: chatCompletionsFormat, perEvent: true },
  { name: 'Messages client, translated, a read per event', format: anthropicMessagesFormat, perEvent: true },
];

/** One streamed call's pipeline, read to its end; the number of bytes the client got. */
async function oneStream(format: ClientFormat, perEvent: boolean): Promise<number> {
  const decoded = format.decode(clientBody);
  const ctx: EncodeContext = { id: `${format.idPrefix}bench`, model: 'fake/bench', created: 1, decoded };
  const tap = new OutcomeTap(
    'fake/bench',
    () => 3,
    () => undefined,
  );
  const model = { id: 'fake/bench', upstreamModel: 'bench' };
  const first = await awaitFirstEvent(upstream(perEvent), model.id, 60_000);
  const stream = clientStream({ upstream: first, format, ctx, tap, abort: new AbortController() });
  let bytes = 0;
  for await (const piece of stream) bytes += piece.byteLength;
  return bytes;
}

async function cpuPerStream(format: ClientFormat, perEvent: boolean, streams: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < streams; i++) await oneStream(format, perEvent);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / streams;
}

const ALLOC_CHILD = stringArg('--alloc-child', '');
if (ALLOC_CHILD) {
  const only = cases.find((c) => c.name === ALLOC_CHILD);
  if (!only) throw new Error(`no case ${ALLOC_CHILD}`);
  for (let i = 0; i < STREAMS; i++) await oneStream(only.format, only.perEvent);
  process.exit(0);
}

/** Heap KB per stream of one case, from the GC log of a child process running it alone. */
async function allocatedKbPerStream(name: string): Promise<number> {
  const { bytes } = await heapAllocated([
    process.execPath,
    import.meta.path,
    '--alloc-child',
    name,
    '--streams',
    String(STREAMS),
    '--deltas',
    String(DELTAS),
  ]);
  return bytes / 1024 / STREAMS;
}

const sizes = new Map<string, number>();
for (const c of cases) {
  sizes.set(c.name, await oneStream(c.format, c.perEvent));
  await cpuPerStream(c.format, c.perEvent, Math.min(STREAMS, 5_000)); // warm-up: the JIT keeps compiling for thousands of calls
}
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++)
  for (const c of cases) samples.get(c.name)?.push(await cpuPerStream(c.format, c.perEvent, STREAMS));

console.log(
  `${STREAMS} streams × ${ROUNDS} rounds per case, ${DELTAS} content deltas each; Bun ${Bun.version}; ${new Date().toISOString()}\n`,
);
console.log(
  table(
    cases.map((c) => {
      const xs = samples.get(c.name) ?? [];
      return {
        case: c.name,
        'client bytes': sizes.get(c.name) ?? 0,
        'CPU µs per stream (median)': median(xs).toFixed(1),
        'per round': xs.map((x) => x.toFixed(1)).join(' / '),
        'µs per upstream event': (median(xs) / (DELTAS + 4)).toFixed(2),
      };
    }),
  ),
);

if (process.argv.includes('--alloc')) {
  console.log('\n| case | heap KB allocated per stream |\n| --- | --- |');
  for (const c of cases) console.log(`| ${c.name} | ${(await allocatedKbPerStream(c.name)).toFixed(1)} |`);
}
