import type { CanonicalMessage } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { CACHE_CONTROL_NOT_SENT } from '../chat-completions/encode-request.ts';
import { asObject, type Json } from '../common/validation.ts';
import { nothingUncounted, type PassthroughRequest } from './uncounted-input.ts';
import { withoutSettings } from './withheld-settings.ts';

/**
 * Settings the gateway keeps for itself even when the body passes through: `service_tier` changes
 * what the provider charges, which the catalog's price does not follow; `store` would keep the
 * completion in the operator's upstream account. Left out, as the translation leaves them out.
 */
const WITHHELD = ['service_tier', 'store'] as const;

/** A value with its cache marks taken out, and whether it had any. */
interface Stripped {
  value: unknown;
  marked: boolean;
}

/** `value` without its `cache_control`, or `value` itself when it has none. */
function unmarked(value: unknown): Stripped {
  const obj = asObject(value);
  if (!obj || !('cache_control' in obj)) return { value, marked: false };
  const { cache_control: _mark, ...rest } = obj;
  return { value: rest, marked: true };
}

/** `items` with each one's marks taken out by `strip`; the same array when none had any. */
function stripAll(items: unknown, strip: (item: unknown) => Stripped): Stripped {
  if (!Array.isArray(items)) return { value: items, marked: false };
  const stripped = items.map(strip);
  return stripped.some((s) => s.marked)
    ? { value: stripped.map((s) => s.value), marked: true }
    : { value: items, marked: false };
}

/** A message without cache marks on itself or its content parts. */
function unmarkedMessage(message: unknown): Stripped {
  const own = unmarked(message);
  const obj = asObject(own.value);
  const parts = stripAll(obj?.content, unmarked);
  return obj && parts.marked ? { value: { ...obj, content: parts.value }, marked: true } : own;
}

/**
 * A chat client's body → the body for an OpenAI-compatible chat upstream: the client's own, so
 * what the canonical request has no form for reaches the upstream as written — `seed`, the
 * penalties, `logit_bias`, `logprobs`, `max_completion_tokens` as such (reasoning models refuse
 * `max_tokens`), a server's own settings such as vLLM's `top_k` — where a translation would drop
 * them. Taken out, each with a warning: the settings in `WITHHELD`, and cache marks
 * (`cache_control`, an Anthropic notion), which OpenAI-compatible servers have no use for.
 * The gateway still decodes and validates the whole body (the hold, the records, what it
 * refuses). `model` stays the gateway's id here; the adapter swaps in its upstream model and asks
 * for a stream's usage. Nothing is left uncounted for the hold: the chat decoder refuses every
 * content part it cannot read (files, audio), so the canonical request holds all the body sends.
 */
export function chatPassthroughRequest(body: Json, _history: CanonicalMessage[]): PassthroughRequest {
  const warnings: TranslationWarning[] = [];
  let value = withoutSettings(body, WITHHELD, warnings);
  const messages = stripAll(value.messages, unmarkedMessage);
  const tools = stripAll(value.tools, unmarked);
  if (messages.marked || tools.marked) {
    value = { ...value, messages: messages.value, ...(tools.marked ? { tools: tools.value } : {}) };
    warnings.push(CACHE_CONTROL_NOT_SENT);
  }
  return { value, warnings, uncounted: nothingUncounted() };
}
