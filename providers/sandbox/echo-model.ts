import type { CanonicalRequest, CanonicalUsage, FinishReason } from '../../translators/canonical/index.ts';

/**
 * `sandbox/echo` (docs/api-contract.md): answers `echo: ` + the last user message's text, or calls a tool
 * when `tool_choice` is required or names one; honours max tokens and stop sequences; counts
 * whitespace-separated tokens. Pure and deterministic, so tests can predict every byte.
 */
export interface EchoResult {
  kind: 'text' | 'tool-call';
  /** The answer text, or the tool call's arguments JSON. */
  text: string;
  toolName?: string;
  finishReason: FinishReason;
  stopSequence?: string;
  usage: CanonicalUsage;
}

export const countTokens = (text: string): number => text.split(/\s+/).filter(Boolean).length;

function messageText(request: CanonicalRequest): string[] {
  const out: string[] = [];
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === 'text') out.push(part.text);
      else if (part.type === 'tool-call') out.push(part.arguments);
      else if (part.type === 'tool-result')
        for (const inner of part.content) if (inner.type === 'text') out.push(inner.text);
    }
  }
  return out;
}

export function lastUserText(request: CanonicalRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role !== 'user') continue;
    return message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(' ');
  }
  return '';
}

/** Keeps the first `max` whitespace tokens with their original spacing. */
function firstTokens(text: string, max: number): string {
  const pieces = text.match(/\s*\S+/g) ?? [];
  return pieces.slice(0, max).join('');
}

function chosenTool(request: CanonicalRequest): string | undefined {
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (!choice || tools.length === 0) return undefined;
  if (choice.type === 'required') return tools[0]?.name;
  if (choice.type === 'tool') return tools.find((t) => t.name === choice.name)?.name ?? tools[0]?.name;
  return undefined;
}

/** The request's input tokens as `sandbox/echo` reports them in usage (and count_tokens answers). */
export const echoInputTokens = (request: CanonicalRequest): number =>
  messageText(request).reduce((sum, text) => sum + countTokens(text), 0);

export function runEcho(request: CanonicalRequest): EchoResult {
  const input = lastUserText(request);
  const inputTokens = echoInputTokens(request);
  const usage = (outputTokens: number): CanonicalUsage => ({
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
  });

  const toolName = chosenTool(request);
  if (toolName) {
    const args = JSON.stringify({ input });
    return {
      kind: 'tool-call',
      text: args,
      toolName,
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: usage(countTokens(args)),
    };
  }

  let text = `echo: ${input}`;
  let stopSequence: string | undefined;
  let stopAt = text.length;
  for (const sequence of request.stopSequences ?? []) {
    const at = sequence ? text.indexOf(sequence) : -1;
    if (at !== -1 && at < stopAt) {
      stopAt = at;
      stopSequence = sequence;
    }
  }
  text = text.slice(0, stopAt);
  if (request.maxTokens !== undefined && countTokens(text) > request.maxTokens) {
    text = firstTokens(text, request.maxTokens);
    return { kind: 'text', text, finishReason: { unified: 'length', raw: 'length' }, usage: usage(countTokens(text)) };
  }
  if (stopSequence !== undefined) {
    return {
      kind: 'text',
      text,
      stopSequence,
      finishReason: { unified: 'stop-sequence', raw: 'stop_sequence' },
      usage: usage(countTokens(text)),
    };
  }
  return { kind: 'text', text, finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(countTokens(text)) };
}

/** The pieces the answer streams in: one whitespace-led word at a time. */
export function streamPieces(text: string): string[] {
  const pieces: string[] = text.match(/\s*\S+/g) ?? [];
  const covered = pieces.join('').length;
  // Trailing whitespace rides on the last piece so the pieces always join back to the text.
  if (covered < text.length) {
    if (pieces.length) pieces[pieces.length - 1] += text.slice(covered);
    else pieces.push(text);
  }
  return pieces;
}
