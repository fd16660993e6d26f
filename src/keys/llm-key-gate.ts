import type { CanonicalRequest } from '../../translators/canonical/index.ts';
import type { UncountedInput } from '../../translators/passthrough/index.ts';
import { estimateInputTokens } from '../llm/input-estimate.ts';
import { unitsToUsd } from '../accounts/money.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import { type ErrorFamily, LlmError } from '../llm/llm-error.ts';
import type { Hold } from '../llm/worst-case.ts';
import type { KeyBudgets } from './key-budgets.ts';
import { keyBudgetMessage, modelAllowed, modelNotAllowedMessage } from './key-policy.ts';
import type { KeyRateLimits, TokenTicket } from './key-rate-limits.ts';

/** What a call took from its key at admission, given back or corrected when it ends. */
export interface KeyTicket {
  keyId: number;
  holdId: string | null;
  tokens: TokenTicket | null;
}

/**
 * A key's limits on the LLM and embeddings endpoints (docs/keys.md), in the client format's own error shape:
 * the model allow-list (403 `model_not_allowed`), the budget (402 `key_budget_exceeded`, held
 * like the balance: worst case at admission, real charge at settlement) and `tpm` (429).
 */
export class LlmKeyGate {
  constructor(
    private readonly budgets: KeyBudgets,
    private readonly limits: KeyRateLimits,
  ) {}

  checkModel(family: ErrorFamily, auth: AuthContext, modelId: string): void {
    if (auth.policy && !modelAllowed(auth.policy.models, modelId))
      throw new LlmError(family, 'permission_denied', modelNotAllowedMessage(modelId), 'model', 'model_not_allowed');
  }

  /** The models the key may use, as a test; undefined for a key without a list (every model). */
  modelFilter(auth: AuthContext): ((modelId: string) => boolean) | undefined {
    const models = auth.policy?.models ?? null;
    return models === null ? undefined : (modelId) => modelAllowed(models, modelId);
  }

  /**
   * An LLM call's admission: its tokens estimate and worst-case hold taken from the key; throws
   * the refusal. `uncounted`: what a passed-through body sends beyond `request`, estimated too.
   */
  admit(
    family: ErrorFamily,
    auth: AuthContext,
    request: CanonicalRequest,
    hold: Hold,
    uncounted?: UncountedInput,
  ): Promise<KeyTicket> {
    return this.admitTokens(family, auth, () => tokenEstimate(request, hold, uncounted), hold.units);
  }

  /**
   * Any metered call's admission (an LLM or embeddings call): `tokens` (read only when the key
   * has a `tpm`) counted against the key's minute, `holdUnits` held on its budget.
   */
  async admitTokens(
    family: ErrorFamily,
    auth: AuthContext,
    tokens: () => number,
    holdUnits: bigint,
  ): Promise<KeyTicket> {
    const ticket: KeyTicket = { keyId: auth.keyId, holdId: null, tokens: null };
    const policy = auth.policy;
    if (!policy) return ticket;
    if (policy.tpm !== null) {
      const counted = await this.limits.tokens(auth.keyId, policy.tpm, tokens());
      if (!counted.ok) {
        const error = new LlmError(
          family,
          'rate_limit',
          `rate limit exceeded: this API key's tpm (${policy.tpm} tokens per minute) is used up`,
          null,
          'key_tpm_exceeded',
        );
        error.headers['retry-after'] = String(counted.retryAfterSeconds);
        throw error;
      }
      ticket.tokens = counted.ticket;
    }
    if (policy.budgeted) {
      const held = await this.budgets.reserve(auth.keyId, holdUnits).catch((err: unknown) => {
        this.release(ticket);
        throw err;
      });
      if (!held.ok) {
        this.release(ticket);
        throw new LlmError(
          family,
          'insufficient_balance',
          `${keyBudgetMessage} (it can still spend $${unitsToUsd(held.availableUnits)}; this call may cost up to $${unitsToUsd(holdUnits)})`,
          null,
          'key_budget_exceeded',
        );
      }
      ticket.holdId = held.id;
    }
    return ticket;
  }

  /** The call was refused or failed before any usage: everything goes back. */
  release(ticket: KeyTicket): void {
    if (ticket.holdId) this.budgets.release(ticket.holdId);
    this.correct(ticket, 0);
  }

  /**
   * The call's record and charge are committed (the usage recorder settled its budget hold with
   * them): the tokens are corrected.
   */
  settled(ticket: KeyTicket, usedTokens: number): void {
    this.correct(ticket, usedTokens);
  }

  /**
   * In memory: the difference goes back to (or comes from) this instance's tpm allowance and the
   * store hears of it in batch (KeyRateLimits logs a batch that fails).
   */
  private correct(ticket: KeyTicket, usedTokens: number): void {
    if (ticket.tokens) this.limits.correct(ticket.tokens, usedTokens);
  }
}

/**
 * A call's tokens as counted against `tpm` at admission: its input estimate plus the output it
 * asked for at most (0 when it set no `max_tokens`); settlement puts the real count in its place.
 */
function tokenEstimate(request: CanonicalRequest, hold: Hold, uncounted?: UncountedInput): number {
  return estimateInputTokens(request, uncounted) + (request.maxTokens === undefined ? 0 : hold.outputTokens);
}
