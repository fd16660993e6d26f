import type { LlmAdapter } from '../../providers/types.ts';
import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import { unitsToUsd } from '../accounts/money.ts';
import type { KeyTicket, LlmKeyGate } from '../keys/llm-key-gate.ts';
import type { Deployment } from '../routing/routing-table.ts';
import type { Call } from './llm-call.ts';
import { holdAfterKey } from './hold-after-key.ts';
import { LlmError } from './llm-error.ts';
import { unpricedTool } from './tool-call-hold.ts';
import { affordableOutputTokens, worstCaseHold } from './worst-case.ts';

/** What holding a call takes from: the account's balance and the key's limits. */
export interface HoldDeps {
  adapters: ReadonlyMap<string, LlmAdapter>;
  reservations: BalanceReservations;
  keyGate?: LlmKeyGate;
}

/** What a call took at admission: its balance hold, its key's ticket, and the hold in USD. */
export interface CallHold {
  reservationId: string;
  keyTicket: KeyTicket | null;
  heldUsd: number;
}

/**
 * Holds the call's worst case (input bound + max_tokens or the model's ceiling, at its prices)
 * against the account's spendable balance; refused → 402 saying what `max_tokens` would fit.
 * Any model of the plan may serve, so the hold is the dearest of their worst cases. The key's
 * own limits come first: a call its key refuses never touches the balance.
 */
export async function holdCall(deps: HoldDeps, call: Call): Promise<CallHold> {
  const { format, auth } = call;
  // Every deployment, whichever models and providers serve it: any may get the client's body.
  if (call.uncounted?.perCallTools) for (const d of call.plan) refuseUnpricedTools(deps, call, d);
  let config = call.requested.config;
  let hold = worstCaseHold(call.decoded.request, config, call.uncounted);
  const priced = new Set([config]);
  for (const d of call.plan) {
    if (priced.has(d.entry.config)) continue;
    priced.add(d.entry.config);
    const other = worstCaseHold(call.decoded.request, d.entry.config, call.uncounted);
    if (other.units > hold.units) {
      hold = other;
      config = d.entry.config;
    }
  }
  const keyTicket = deps.keyGate
    ? await deps.keyGate.admit(format.family, auth, call.decoded.request, hold, call.uncounted)
    : null;
  const result = await holdAfterKey(deps.reservations, deps.keyGate, keyTicket, auth.accountId, hold.units);
  if (result.ok) return { reservationId: result.id, keyTicket, heldUsd: unitsToUsd(hold.units) };
  const affordable = affordableOutputTokens(result.availableUnits, hold, config);
  const message =
    affordable > 0
      ? `insufficient balance: the balance covers at most ${affordable} output tokens for this request; lower max_tokens or top up the account`
      : 'insufficient balance: top up the account to continue';
  throw new LlmError(
    format.family,
    'insufficient_balance',
    message,
    affordable > 0 ? 'max_tokens' : null,
    'insufficient_balance',
  );
}

/**
 * A built-in tool billed per call (`web_search`…) goes upstream only to a model that prices it:
 * refused, naming the tool, for any model of the plan whose upstream gets the client's body.
 */
function refuseUnpricedTools(deps: HoldDeps, call: Call, { entry, provider }: Deployment): void {
  const perCall = call.uncounted?.perCallTools;
  if (!perCall || deps.adapters.get(provider.id)?.passthroughFormat !== call.wire?.format) return;
  const tool = unpricedTool(perCall, entry.config);
  if (!tool) return;
  throw new LlmError(
    call.format.family,
    'invalid_request',
    `${tool.at}.type: ${tool.name} is billed per call by the provider, and model '${entry.object.id}' sets no pricing.per_tool_call.${tool.name}`,
    `${tool.at}.type`,
  );
}
