import type { CanonicalResponse } from '../../translators/canonical/index.ts';
import { storableString } from '../http/hostile-json.ts';
import type { LlmKeyGate } from '../keys/llm-key-gate.ts';
import type { Call } from './llm-call.ts';
import { llmCost } from './pricing.ts';
import { recordableInput } from './record-input.ts';
import type { UsageRecorder } from './usage-recorder.ts';

/** Where a call's record goes: the recorder (record and charge in one commit) and the key's tpm. */
export interface RecordDeps {
  recorder: UsageRecorder;
  keyGate?: LlmKeyGate;
}

/** How a call ended, beyond its status: the client left, or the exact cache answered. */
export type EndedBy = 'client_disconnected' | 'cache_hit';

/**
 * Records the call and settles its hold at the served model's prices; resolves when both are
 * durably committed (docs/money.md). A cache hit carries no usage and costs nothing.
 */
export function recordCall(
  deps: RecordDeps,
  call: Call,
  status: 'completed' | 'failed',
  response: CanonicalResponse | undefined,
  errorMessage?: string,
  endedBy?: EndedBy,
): Promise<void> {
  const usage = response?.usage;
  const costUsd = usage ? llmCost(call.served.entry.config.pricing, usage) : 0;
  call.chargedUsd = costUsd;
  call.watch.settled(
    status === 'failed' ? 'failed' : endedBy === 'client_disconnected' ? 'cancelled' : 'completed',
    response,
    costUsd,
    errorMessage,
  );
  const recorded = deps.recorder.record({
    taskId: crypto.randomUUID(),
    accountId: call.auth.accountId,
    model: call.served.model.id,
    provider: call.served.deployment.provider.id,
    status,
    input: recordableInput(call.body),
    output: recordedOutput(call, response, endedBy),
    errorMessage: errorMessage === undefined ? undefined : storableString(errorMessage),
    costUsd,
    createdAt: call.startedAt,
    reservationId: call.reservationId,
    requestId: call.watch.requestId,
    keyId: call.auth.keyId,
    keyHoldId: call.keyTicket?.holdId ?? undefined,
  });
  const ticket = call.keyTicket;
  // The key's tpm is corrected off the path of the client's last byte.
  if (ticket)
    void recorded.then(() => deps.keyGate?.settled(ticket, usage ? usage.inputTokens + usage.outputTokens : 0));
  return recorded;
}

/** The record's `output`: the answer's id, finish, text (cut at 2,000 characters), tool names and usage. */
function recordedOutput(call: Call, response: CanonicalResponse | undefined, endedBy: EndedBy | undefined) {
  if (!response) return endedBy === 'cache_hit' ? { id: call.encode.id, format: call.format.name, cache: 'hit' } : null;
  const usage = response.usage;
  const text = response.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  const toolCalls = response.content.flatMap((p) => (p.type === 'tool-call' ? [p.name] : []));
  return {
    ...(call.attempts > 1 ? { attempts: call.attempts } : {}),
    id: call.idFromUpstream ? response.id : call.encode.id,
    format: call.format.name,
    finish_reason: endedBy ?? response.finishReason.unified,
    text: storableString(text.length > 2000 ? `${text.slice(0, 2000)}…` : text),
    ...(toolCalls.length ? { tool_calls: toolCalls.map(storableString) } : {}),
    usage: usage && {
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      total_tokens: usage.totalTokens,
      ...(usage.cachedInputTokens ? { cache_read_tokens: usage.cachedInputTokens } : {}),
      ...(usage.cacheWriteTokens ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
      ...(usage.cacheWrite1hTokens ? { cache_write_1h_tokens: usage.cacheWrite1hTokens } : {}),
      ...(usage.builtInToolCalls ? { built_in_tool_calls: usage.builtInToolCalls } : {}),
    },
  };
}
