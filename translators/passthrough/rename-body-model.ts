import { quotedModel, stringEnd, stringValueStart } from './json-text.ts';

/**
 * A whole non-streamed response body (chat completion, Anthropic message) as the upstream wrote
 * it, with its top-level `model` → the gateway's id, the one change a passed-through answer gets.
 *
 * Spliced into the text when that is safe to decide cheaply: the first `"model"` in the text is
 * the top-level key (both formats name the model before any content) and no other `"model"`
 * follows. Inside a JSON string every quote is escaped, so `"model"` with both quotes bare is a
 * key or a whole string value, never part of a text. Otherwise (a nested `"model"` key first, a
 * second one, a model that is not a string) the body is parsed and written again with the
 * top-level key set, so the answer is right whatever the upstream's layout.
 *
 * `text` must be valid JSON (the caller has parsed it to bill the call).
 */
export function renameBodyModel(text: string, gatewayModel: string): string {
  return splicedModel(text, gatewayModel) ?? rewrittenModel(text, gatewayModel);
}

function splicedModel(text: string, gatewayModel: string): string | undefined {
  const key = text.indexOf('"model"');
  if (key === -1 || depthAt(text, key) !== 1) return undefined;
  const start = stringValueStart(text, key + 7);
  const end = start === -1 ? -1 : stringEnd(text, start);
  if (end === -1 || text.indexOf('"model"', end) !== -1) return undefined;
  return `${text.slice(0, start)}${quotedModel(gatewayModel)}${text.slice(end)}`;
}

function rewrittenModel(text: string, gatewayModel: string): string {
  const body = JSON.parse(text) as unknown;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return text;
  // Assigning an existing key keeps its place in the object's key order.
  return JSON.stringify({ ...body, model: gatewayModel });
}

/** Nesting depth (objects and arrays) at `at`, strings skipped. */
function depthAt(text: string, at: number): number {
  let depth = 0;
  for (let i = 0; i < at; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const end = stringEnd(text, i);
      if (end === -1) return -1;
      i = end - 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return depth;
}
