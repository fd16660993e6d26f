import type { Translated } from '../canonical/warnings.ts';
import type { Json } from '../common/validation.ts';

/**
 * What a passed-through body sends the upstream beyond the canonical request the gateway decoded
 * from it (a Messages `document` or `search_result` block, a Responses `input_file` part or
 * built-in tool): the upstream bills it as input, so the balance hold must cover it too
 * (src/llm/worst-case.ts, docs/money.md).
 */
export interface UncountedInput {
  /**
   * Tokens held for parts read as text: the UTF-8 bytes of their JSON, each bounding a token as
   * for any text, and any allowance a format adds (Anthropic's prompt for its own tools).
   */
  textTokens: number;
  /** Image parts: held as any image is. */
  images: number;
  /**
   * Files (a PDF, a document by URL), and tools the upstream runs within the response (a web
   * search reads pages into the conversation): no byte count bounds what they cost as input.
   */
  files: number;
  /** Built-in tools the body enables that the provider bills per call, if any (responses-tool-fees.ts). */
  perCallTools?: PerCallTools;
}

/** Built-in tools billed per call, each named as `pricing.per_tool_call` names it, and where it stands. */
export interface PerCallTools {
  tools: Array<{ name: string; at: string }>;
  /** The most built-in tool calls one response may make (Responses `max_tool_calls`, the sum of Messages `max_uses`). */
  maxCalls: number;
}

/** A passthrough's upstream body, its warnings, and what of it the canonical request does not count. */
export type PassthroughRequest = Translated<Json> & { uncounted: UncountedInput };

export const nothingUncounted = (): UncountedInput => ({ textTokens: 0, images: 0, files: 0 });

/** How a left-out part is held: as its JSON text, as an image, or as a file. */
export type LeftOutKind = 'text' | 'image' | 'file';

/** Adds one left-out `part` to `into`, as `kind` says it costs. */
export function countLeftOut(into: UncountedInput, part: unknown, kind: LeftOutKind): void {
  if (kind === 'image') into.images++;
  else if (kind === 'file') into.files++;
  // Its whole JSON text: every token the upstream reads of it is at least one of these bytes.
  else into.textTokens += Buffer.byteLength(JSON.stringify(part) ?? '');
}
