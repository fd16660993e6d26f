import type { ReasoningEffort, ReasoningSettings } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { EFFORT_BUDGET } from '../common/reasoning-effort.ts';
import { isSet, parseAt } from '../common/validation.ts';
import { ThinkingSchema } from './request-schema.ts';
import type { AnthropicThinking } from './wire-types.ts';

/** Anthropic's efforts above `high` have no canonical word: they read `high`. */
function canonicalEffort(effort: string, warnings: TranslationWarning[]): ReasoningEffort {
  if (effort === 'low' || effort === 'medium' || effort === 'high') return effort;
  warnings.push({
    type: 'changed-value',
    field: 'output_config.effort',
    message: `effort '${effort}' has no equivalent in other formats and is sent as 'high'`,
  });
  return 'high';
}

/**
 * `thinking` and `output_config.effort` → canonical reasoning settings. `enabled` keeps its
 * budget, `adaptive` is reasoning on at the model's discretion, `disabled` is off.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
 */
export function decodeReasoning(
  thinking: unknown,
  effort: string | null | undefined,
  warnings: TranslationWarning[],
): ReasoningSettings | undefined {
  let settings: ReasoningSettings | undefined;
  if (isSet(thinking)) {
    const parsed = parseAt(ThinkingSchema, thinking, 'thinking');
    settings =
      parsed.type === 'enabled'
        ? { enabled: true, budgetTokens: parsed.budget_tokens }
        : { enabled: parsed.type === 'adaptive' };
  }
  if (typeof effort === 'string') settings = { ...settings, effort: canonicalEffort(effort, warnings) };
  return settings;
}

type AnthropicEffort = 'low' | 'medium' | 'high';

function anthropicEffort(effort: ReasoningEffort, warnings: TranslationWarning[]): AnthropicEffort {
  if (effort !== 'minimal') return effort;
  warnings.push({
    type: 'changed-value',
    field: 'reasoning',
    message: "Anthropic has no 'minimal' effort; 'low' was sent",
  });
  return 'low';
}

export interface EncodedReasoning {
  thinking?: AnthropicThinking;
  /** `output_config.effort`: only when the request named an effort beside (or without) a thinking setting of its own. */
  effort?: AnthropicEffort;
  /** `max_tokens`, raised when the gateway chose it, so the budget fits under it (budget < max_tokens). */
  maxTokens: number;
}

/**
 * Canonical settings → `thinking` (and `output_config.effort`). A budget is kept; an effort alone
 * with reasoning on becomes the budget of the effort table; reasoning on with neither is
 * `adaptive`. The budget must stay below `max_tokens`: a client's `max_tokens` is kept and the
 * budget lowered under it (never below Anthropic's 1024 minimum: then thinking is left off),
 * with a warning either way.
 */
export function encodeReasoning(
  reasoning: ReasoningSettings | undefined,
  maxTokens: number,
  defaulted: boolean,
  warnings: TranslationWarning[],
): EncodedReasoning {
  if (!reasoning) return { maxTokens };
  // An effort the client gave with its own budget, or without turning thinking on, is Anthropic's effort setting.
  const effort =
    reasoning.effort && (reasoning.budgetTokens !== undefined || reasoning.enabled === undefined)
      ? { effort: anthropicEffort(reasoning.effort, warnings) }
      : {};
  if (reasoning.enabled === undefined) return { maxTokens, ...effort };
  if (!reasoning.enabled) return { thinking: { type: 'disabled' }, maxTokens, ...effort };
  const budget = reasoning.budgetTokens ?? (reasoning.effort ? EFFORT_BUDGET[reasoning.effort] : undefined);
  if (budget === undefined) return { thinking: { type: 'adaptive' }, maxTokens, ...effort };
  if (budget < maxTokens) return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens, ...effort };
  if (defaulted)
    return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: budget + maxTokens, ...effort };
  if (maxTokens - 1 >= EFFORT_BUDGET.minimal) {
    warnings.push({
      type: 'changed-value',
      field: 'reasoning',
      message: `Anthropic needs the thinking budget below max_tokens; ${maxTokens - 1} was sent instead of ${budget}`,
    });
    return { thinking: { type: 'enabled', budget_tokens: maxTokens - 1 }, maxTokens, ...effort };
  }
  warnings.push({
    type: 'unsupported-setting',
    field: 'reasoning',
    message: `max_tokens ${maxTokens} leaves no room for Anthropic's minimum thinking budget (1024); reasoning was not requested`,
  });
  return { maxTokens, ...effort };
}
