/**
 * Whether JSON text nests deeper than `max`, decided before `JSON.parse` builds anything: JSON.parse
 * reads nesting far deeper than any recursive walk, `JSON.stringify` or Postgres `jsonb` goes
 * (100,000 levels), so text from outside (a client's body, an upstream's answer) is checked first.
 */
export function jsonTextTooDeep(text: string, max: number): boolean {
  return !fewOpeners(text, max) && scanTooDeep(text, max);
}

/**
 * At most `max` opening brackets in the whole text (strings included) cannot nest deeper than
 * `max`. Counted with native `indexOf`, this spares most texts the character-by-character scan,
 * which costs several times `JSON.parse` itself.
 */
function fewOpeners(text: string, max: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > max) return false;
    }
  }
  return true;
}

/** The depth found by scanning brackets outside strings: a linear scan, not a recursion. */
function scanTooDeep(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}
