/**
 * What building the upstream's request body costs the gateway, per client format, when the
 * upstream speaks the client's own format: translated (the client's body decoded to the canonical
 * request, encoded again and stringified, as before the passthroughs) against passed through (the
 * same decode, for the hold and the record, then the client's own body with its model replaced,
 * stringified: src/llm/formats/*, translators/passthrough/). Pure functions in one process, no
 * sockets; CPU microseconds per call, the median of `--rounds`. Prints a Markdown table (figures,
 * not a test).
 *
 *   bun run bench/request-body.ts [--calls 20000] [--rounds 5] [--messages 30] [--chars 2000]
 *
 * Bodies: a short one (a system line and a question) and a conversation of `--messages` turns of
 * `--chars` characters each.
 */
import { encodeAnthropicRequest } from '../translators/anthropic-messages/index.ts';
import { encodeChatRequest } from '../translators/chat-completions/index.ts';
import { encodeResponsesRequest } from '../translators/responses/index.ts';
import type { CanonicalRequest } from '../translators/canonical/index.ts';
import { anthropicMessagesFormat } from '../src/llm/formats/anthropic-messages-format.ts';
import { chatCompletionsFormat } from '../src/llm/formats/chat-completions-format.ts';
import { responsesFormat } from '../src/llm/formats/responses-format.ts';
import type { ClientFormat } from '../src/llm/client-format.ts';
import { conversation } from '../tests/helpers/prose.ts';
import { numberArg } from './lib/cli-args.ts';
import { table } from './lib/wrk.ts';

const CALLS = numberArg('--calls', 20_000);
const ROUNDS = numberArg('--rounds', 5);
const MESSAGES = numberArg('--messages', 30);
const CHARS = numberArg('--chars', 2_000);
const UPSTREAM_MODEL = 'upstream-model-2026-01-01';

interface Client {
  name: string;
  format: ClientFormat;
  /** The client's body from a system line and turns. */
  body(system: string, turns: Array<{ role: 'user' | 'assistant'; content: string }>): Record<string, unknown>;
  /** The translation toward an upstream of the same format. */
  encode(request: CanonicalRequest): unknown;
}

const CLIENTS: Client[] = [
  {
    name: 'chat completions',
    format: chatCompletionsFormat,
    body: (system, turns) => ({
      model: 'bench/model',
      messages: [{ role: 'system', content: system }, ...turns],
      max_tokens: 64,
    }),
    encode: (request) => encodeChatRequest(request, UPSTREAM_MODEL).value,
  },
  {
    name: 'Messages',
    format: anthropicMessagesFormat,
    body: (system, turns) => ({ model: 'bench/model', system, messages: turns, max_tokens: 64 }),
    encode: (request) => encodeAnthropicRequest(request, UPSTREAM_MODEL).value,
  },
  {
    name: 'Responses',
    format: responsesFormat,
    body: (system, turns) => ({ model: 'bench/model', instructions: system, input: turns, max_output_tokens: 64 }),
    encode: (request) => encodeResponsesRequest(request, UPSTREAM_MODEL).value,
  },
];

/** One call's body work, translated or passed through; returns the bytes it would send. */
function build(client: Client, body: Record<string, unknown>, passthrough: boolean): string {
  const view = passthrough ? client.format.passthrough?.view : undefined;
  const decoded = client.format.decode(view ? view(body) : body);
  if (!passthrough) return JSON.stringify(client.encode({ ...decoded.request, stream: false }));
  const built = client.format.passthrough?.request?.(body, []);
  if (!built) throw new Error(`${client.name} has no passthrough request`);
  return JSON.stringify({ ...built.value, model: UPSTREAM_MODEL, stream: false });
}

/** CPU microseconds per call over `CALLS` calls, the median of `ROUNDS`. */
function microseconds(run: () => string): number {
  const rounds: number[] = [];
  let bytes = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) bytes += run().length;
    const used = process.cpuUsage(t0);
    rounds.push((used.user + used.system) / CALLS);
  }
  if (bytes === 0) throw new Error('nothing was built');
  return rounds.sort((a, b) => a - b)[Math.floor(rounds.length / 2)] ?? Number.NaN;
}

const shapes = [
  { name: 'short', system: 'You are a benchmark.', turns: [{ role: 'user' as const, content: 'Say twenty words.' }] },
  { name: `${MESSAGES} turns of ${CHARS} chars`, system: 'You are a benchmark.', turns: conversation(MESSAGES, CHARS) },
];

const rows: Array<Record<string, string | number>> = [];
for (const client of CLIENTS)
  for (const shape of shapes) {
    const body = client.body(shape.system, shape.turns);
    // Warm both paths up first, so the JIT's compile time is not counted as either's.
    for (let i = 0; i < 5_000; i++) build(client, body, i % 2 === 0);
    const translated = microseconds(() => build(client, body, false));
    const passed = microseconds(() => build(client, body, true));
    rows.push({
      client: client.name,
      body: shape.name,
      'translated µs': translated.toFixed(2),
      'passed through µs': passed.toFixed(2),
      'passed / translated': (passed / translated).toFixed(2),
    });
    process.stderr.write(`${client.name}, ${shape.name}: done\n`);
  }
console.log(`CPU per call to build the upstream body (${CALLS} calls, median of ${ROUNDS} rounds)\n`);
console.log(table(rows));
