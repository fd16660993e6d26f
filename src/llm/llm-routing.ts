import { UntranslatableBody } from './untranslatable-body.ts';
import { InvalidRequestError } from '../../translators/canonical/index.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import type { FailureVerdict } from '../routing/failover.ts';
import { LlmError } from './llm-error.ts';

/**
 * Whether an LLM attempt's failure moves on to the next deployment (docs/routing.md): connect
 * errors, timeouts, 429 and 5xx do; the upstream's verdict on the request itself (400, 401, 403,
 * 404, 413, 422) is the client's and is returned as it is; a client that went away stops the loop.
 */
export function classifyLlmFailure(err: unknown, signal: AbortSignal): FailureVerdict {
  if (signal.aborted) return 'stop';
  if (err instanceof UpstreamError) {
    switch (err.kind) {
      case 'unreachable':
      case 'timeout':
      case 'rate_limited':
      case 'server_error':
      case 'malformed':
        return 'fail-over';
      case 'too_large_for_limit':
        return 'next-deployment';
      case 'bad_request':
      case 'auth':
      case 'not_found':
        return 'client-error';
      default: {
        const exhaustive: never = err.kind;
        throw new Error(`unknown upstream error kind ${exhaustive}`);
      }
    }
  }
  if (err instanceof UntranslatableBody) return 'next-deployment';
  if (err instanceof InvalidRequestError || err instanceof LlmError) return 'client-error';
  // Anything else came from the upstream's answer (a body that is not JSON, no stream body).
  return 'fail-over';
}

/** The headers every LLM response carries: which model and provider served it, after how many attempts. */
export function routingHeaders(model: string, provider: string, attempts: number): Record<string, string> {
  return { 'x-gateway-model': model, 'x-gateway-provider': provider, 'x-gateway-attempts': String(attempts) };
}
