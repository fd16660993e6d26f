/**
 * What a recorded or fixture stream says, read straight from its raw events, independently of
 * the gateway's decoders: the oracle the replay tests compare the gateway's output with.
 */

/** Raw recorded JSON, read field by field. */
export type Raw = any;

export type FixtureKind = 'anthropic' | 'chat';

/** The JSON payloads of an `.sse` fixture, in order (`[DONE]` left out). */
export async function rawEvents(path: string): Promise<Raw[]> {
  const text = await Bun.file(path).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)));
}

export interface Truth {
  /** Answer text (a chat refusal counts as text, as the gateway carries it). */
  text: string;
  reasoning: string;
  /** Thinking signatures, in order. */
  signatures: string[];
  toolNames: string[];
  /** The whole input, cache reads and writes included. */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

export function truthOf(kind: FixtureKind, events: Raw[]): Truth {
  const t: Truth = {
    text: '',
    reasoning: '',
    signatures: [],
    toolNames: [],
    input: 0,
    cacheRead: 0,
    cacheWrite: 0,
    output: 0,
  };
  if (kind === 'anthropic') {
    const usage: Raw = {};
    for (const e of events) {
      if (e.type === 'message_start') Object.assign(usage, e.message.usage);
      if (e.type === 'message_delta') Object.assign(usage, e.usage);
      if (e.type === 'content_block_start' && e.content_block.type === 'tool_use')
        t.toolNames.push(e.content_block.name);
      if (e.type !== 'content_block_delta') continue;
      if (e.delta.type === 'text_delta') t.text += e.delta.text;
      if (e.delta.type === 'thinking_delta') t.reasoning += e.delta.thinking;
      if (e.delta.type === 'signature_delta') t.signatures.push(e.delta.signature);
    }
    t.cacheRead = usage.cache_read_input_tokens ?? 0;
    t.cacheWrite = usage.cache_creation_input_tokens ?? 0;
    t.input = (usage.input_tokens ?? 0) + t.cacheRead + t.cacheWrite;
    t.output = usage.output_tokens ?? 0;
    return t;
  }
  for (const e of events) {
    if (e.usage) {
      t.input = e.usage.prompt_tokens;
      t.output = e.usage.completion_tokens;
      t.cacheRead = e.usage.prompt_tokens_details?.cached_tokens ?? 0;
    }
    const delta = e.choices?.[0]?.delta ?? {};
    t.text += (delta.content ?? '') + (delta.refusal ?? '');
    t.reasoning += delta.reasoning_content ?? '';
    for (const call of delta.tool_calls ?? []) if (call.function?.name) t.toolNames.push(call.function.name);
  }
  return t;
}
