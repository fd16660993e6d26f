import type { CanonicalMessage, ReasoningEffort, ReasoningSettings } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { effortForBudget, REASONING_EFFORTS } from './reasoning-effort.ts';
import { invalid } from './validation.ts';

/**
 * OpenAI's reasoning settings (chat `reasoning_effort`, Responses `reasoning.effort`) ↔ canonical.
 * Both OpenAI formats speak only of an effort; a budget becomes the effort of the table in
 * reasoning-effort.ts (docs/protocol-mapping.md, "Reasoning").
 */

/** A client's effort → canonical settings (reasoning on at that effort); `none` turns it off. */
export function decodeEffort(raw: unknown, field: string): ReasoningSettings | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'none') return { enabled: false };
  if (typeof raw === 'string' && (REASONING_EFFORTS as readonly string[]).includes(raw))
    return { enabled: true, effort: raw as ReasoningEffort };
  return invalid(field, `must be one of none, ${REASONING_EFFORTS.join(', ')}`);
}

/** Canonical settings → an effort for an OpenAI-format upstream, with a warning where it cannot say what was asked. */
export function encodeEffort(
  reasoning: ReasoningSettings | undefined,
  field: string,
  warnings: TranslationWarning[],
): ReasoningEffort | undefined {
  if (!reasoning) return undefined;
  if (reasoning.enabled === false) {
    warnings.push({
      type: 'unsupported-setting',
      field,
      message: 'reasoning cannot be turned off through this format; the model default applies',
    });
    return undefined;
  }
  if (reasoning.effort) {
    if (reasoning.budgetTokens !== undefined)
      warnings.push({
        type: 'changed-value',
        field,
        message: `the thinking budget (${reasoning.budgetTokens} tokens) was sent as effort '${reasoning.effort}'`,
      });
    return reasoning.effort;
  }
  if (reasoning.budgetTokens === undefined) return undefined;
  const effort = effortForBudget(reasoning.budgetTokens);
  warnings.push({
    type: 'changed-value',
    field,
    message: `the thinking budget (${reasoning.budgetTokens} tokens) was sent as effort '${effort}'`,
  });
  return effort;
}

/**
 * OpenAI-format requests have no place for earlier reasoning in the conversation (their servers
 * keep it, or never take it back): reasoning parts of assistant turns are left out, with one warning.
 */
export function warnDroppedReasoning(messages: CanonicalMessage[], warnings: TranslationWarning[]): void {
  const i = messages.findIndex((m) => m.role === 'assistant' && m.content.some((p) => p.type === 'reasoning'));
  if (i < 0) return;
  warnings.push({
    type: 'unsupported-content',
    field: `messages[${i}]`,
    message: 'reasoning of earlier assistant turns cannot be sent to this upstream and was left out',
  });
}
