/**
 * Scanning JSON text by hand, for the passthrough's splices of a model id (passthrough-rules.ts
 * on each streamed event, rename-body-model.ts on a whole body): no parse, no regular expression.
 */

/** Past JSON's whitespace (space, tab, line feed, carriage return). */
export function skipSpace(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c === 32 || c === 9 || c === 10 || c === 13) c = text.charCodeAt(++i);
  return i;
}

/** Where the string value of `: "…"` starting at `at` (whitespace allowed) opens, or -1 when it is not a string. */
export function stringValueStart(text: string, at: number): number {
  let i = skipSpace(text, at);
  if (text.charCodeAt(i) !== 58 /* : */) return -1;
  i = skipSpace(text, i + 1);
  return text.charCodeAt(i) === 34 /* " */ ? i : -1;
}

/** Just past the JSON string whose opening quote is at `at`, or -1 when it never closes. */
export function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c === 92 /* \ */) i++;
  }
  return -1;
}

let lastModel: string | undefined;
let lastQuoted = '';

/**
 * A model id as a JSON string. Every event of a passed-through stream splices the same id in, so
 * the last one's quoting is kept rather than made again per event (one `JSON.stringify` each).
 */
export function quotedModel(model: string): string {
  if (model !== lastModel) {
    lastQuoted = JSON.stringify(model);
    lastModel = model;
  }
  return lastQuoted;
}
