import type { ReasoningEffort } from '../canonical/request.ts';

/**
 * Effort ↔ thinking budget, the one table every encoder uses (docs/protocol-mapping.md):
 * OpenAI formats name an effort, Anthropic a token budget (at least 1024).
 */
export const EFFORT_BUDGET: Readonly<Record<ReasoningEffort, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
};

/** A budget → the nearest effort at or below it: under 2048 `minimal`, under 8192 `low`, under 16384 `medium`, else `high`. */
export function effortForBudget(budget: number): ReasoningEffort {
  if (budget < EFFORT_BUDGET.low) return 'minimal';
  if (budget < EFFORT_BUDGET.medium) return 'low';
  if (budget < EFFORT_BUDGET.high) return 'medium';
  return 'high';
}

export const REASONING_EFFORTS: readonly ReasoningEffort[] = ['minimal', 'low', 'medium', 'high'];
