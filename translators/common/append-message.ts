import type { CanonicalMessage } from '../canonical/request.ts';

/**
 * Appends a canonical message, or merges its content into the last message when that one has the
 * same role: formats that send one item per tool result or tool call (chat's `tool` messages,
 * Responses' input items) decode to one message per turn this way.
 */
export function appendMessage(messages: CanonicalMessage[], message: CanonicalMessage): void {
  const last = messages.at(-1);
  if (last?.role === message.role) (last.content as unknown[]).push(...message.content);
  else messages.push(message);
}
