import { type CanonicalMessage, InvalidRequestError } from '../../translators/canonical/index.ts';
import { UntranslatableBody } from './untranslatable-body.ts';
import type { UncountedInput } from '../../translators/passthrough/index.ts';
import type { LlmAdapter, LlmCall, ModelRef } from '../../providers/types.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import type { CatalogEntry } from '../catalog/catalog.ts';
import type { KeyTicket } from '../keys/llm-key-gate.ts';
import type { LlmCallWatch } from '../observability/llm-call-observer.ts';
import type { Deployment } from '../routing/routing-table.ts';
import { routingHeaders } from './llm-routing.ts';
import type { ClientFormat, DecodedClientRequest, EncodeContext } from './client-format.ts';

/** The deployment answering a call: its model (id and prices), provider and adapter. */
export interface Served {
  deployment: Deployment;
  entry: CatalogEntry;
  adapter: LlmAdapter;
  model: ModelRef;
}

/** One LLM call as src/llm/llm-service.ts carries it from decoding to its record. */
export interface Call {
  format: ClientFormat;
  decoded: DecodedClientRequest;
  /** The model the client asked for. */
  requested: CatalogEntry;
  /** The deployments it may try (docs/routing.md); `served` is the one trying or answering. */
  plan: Deployment[];
  served: Served;
  attempts: number;
  auth: AuthContext;
  body: unknown;
  encode: EncodeContext;
  startedAt: Date;
  /** Stored conversation this call continues (Responses), without system messages. */
  history: CanonicalMessage[];
  /** The balance hold taken at admission; settled with the call's record (none for a cache hit). */
  reservationId?: string;
  /** The client's own body, for a deployment whose upstream speaks the client's format (passthrough). */
  wire?: LlmCall['wire'];
  /**
   * A passed-through call whose plan holds deployments of another format: the whole body decoded
   * for them (`decoded` is only what the passthrough reads of it), with that decoding's warnings.
   * Decoded the first time such a deployment is tried, then kept; throws the decoder's refusal.
   */
  translation?: () => DecodedClientRequest;
  /** What `wire` sends beyond the canonical request, held too (src/llm/worst-case.ts). */
  uncounted?: UncountedInput;
  /** The client's request headers, some of which an upstream of its own API takes (`forwardedHeaders`). */
  requestHeaders: Headers;
  /** Metrics and spans of the call (src/observability/); also knows the request id. */
  watch: LlmCallWatch;
  /** What the call took from its API key (budget hold, tpm estimate): src/keys/llm-key-gate.ts. */
  keyTicket?: KeyTicket | null;
  /** The worst case held, in USD: a stream's `x-gateway-cost-usd` (its charge is known only at its end). */
  heldUsd?: number;
  /** What the record charged (src/llm/record-call.ts): a JSON answer's `x-gateway-cost-usd`, the same figure. */
  chargedUsd?: number;
  /** Passed through with the upstream's response id: the record keeps that id, the one the client saw. */
  idFromUpstream?: boolean;
}

/** The deployment's model, provider and adapter; an LLM deployment without an adapter is a bug. */
export function serve(adapters: ReadonlyMap<string, LlmAdapter>, deployment: Deployment): Served {
  const adapter = adapters.get(deployment.provider.id);
  if (!adapter) throw new Error(`provider ${deployment.provider.id} has no LLM adapter`);
  return {
    deployment,
    entry: deployment.entry,
    adapter,
    model: { id: deployment.entry.object.id, upstreamModel: deployment.upstreamModel },
  };
}

/** The client's own body when the deployment serving the call speaks its format; else undefined. */
export function wireFor(call: Call): LlmCall['wire'] {
  return call.wire && call.served.adapter.passthroughFormat === call.wire.format ? call.wire : undefined;
}

/**
 * What the serving deployment is sent: the passthrough's reading beside the client's body, or the
 * whole request decoded. Throws UntranslatableBody when the body cannot be translated for it.
 */
export function decodedFor(call: Call): DecodedClientRequest {
  if (wireFor(call) || !call.translation) return call.decoded;
  try {
    return call.translation();
  } catch (err) {
    throw err instanceof InvalidRequestError ? new UntranslatableBody(err) : err;
  }
}

/** `decode` run once, on first use; its result (or refusal) kept. */
export function once(decode: () => DecodedClientRequest): () => DecodedClientRequest {
  let outcome: { value: DecodedClientRequest } | { error: unknown } | undefined;
  return () => {
    if (!outcome) {
      try {
        outcome = { value: decode() };
      } catch (error) {
        outcome = { error };
      }
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}

/** What the call's metrics and spans name: the deployment serving it. */
export function watchLabels(served: Served) {
  return {
    model: served.model.id,
    upstreamModel: served.model.upstreamModel,
    provider: served.deployment.provider.id,
    providerKind: served.deployment.provider.kind,
  };
}

/** The headers naming who answered: model, provider, attempts (docs/routing.md). */
export function servedHeaders(call: Call): Record<string, string> {
  return routingHeaders(call.served.model.id, call.served.deployment.provider.id, call.attempts);
}
