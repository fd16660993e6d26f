/**
 * `chars` characters of word-like text that compresses about as prose does (a 2,000-word
 * vocabulary in a spread order), not as one repeated phrase would: what a recorded conversation
 * costs to store depends on it (tests/integration/task-payload-compression.test.ts,
 * bench/recorded-payload.ts). Deterministic.
 */
const WORDS = Array.from({ length: 2000 }, (_, i) => (i * 7919).toString(36).slice(0, 2 + (i % 8)));

export function prose(chars: number, seed = 0): string {
  let out = '';
  for (let i = seed; out.length < chars; i++) out += `${WORDS[(i * i + 3 * i) % WORDS.length]} `;
  return out.slice(0, chars);
}

/** A chat conversation of `count` messages of `chars` characters each, user and assistant in turn, each its own text. */
export function conversation(count: number, chars: number): Array<{ role: 'user' | 'assistant'; content: string }> {
  return Array.from({ length: count }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: prose(chars, i * 977),
  }));
}
