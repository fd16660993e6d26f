import type { FinishReason } from '../canonical/finish-reason.ts';

/**
 * How a response ended: its `status`, and `incomplete_details` when it is incomplete.
 * @see https://platform.openai.com/docs/api-reference/responses/object
 */
export interface ResponsesEnding {
  status: 'completed' | 'incomplete' | 'failed';
  incompleteDetails: { reason: 'max_output_tokens' | 'content_filter' } | null;
}

/**
 * A response's `status` and `incomplete_details.reason` → canonical. Responses reports tool calls
 * only through the output items, so the caller passes that fact in. `raw` keeps both words
 * (`incomplete:max_output_tokens`).
 */
export function fromResponsesStatus(
  status: string | undefined,
  incompleteReason: string | undefined,
  hasToolCalls: boolean,
): FinishReason {
  const raw = incompleteReason ? `${status}:${incompleteReason}` : status;
  switch (status) {
    case 'failed':
      return { unified: 'error', raw };
    case 'incomplete':
      return { unified: incompleteReason === 'content_filter' ? 'content-filter' : 'length', raw };
    default:
      return { unified: hasToolCalls ? 'tool-calls' : 'stop', raw };
  }
}

/**
 * A canonical finish → the response's `status` and `incomplete_details`: running out of tokens and
 * a content filter are `incomplete` with their reason, an error is `failed`, anything else
 * `completed` (tool calls show in the output items).
 */
export function toResponsesEnding(finish: FinishReason): ResponsesEnding {
  const unified = finish.unified;
  switch (unified) {
    case 'length':
      return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' } };
    case 'content-filter':
      return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' } };
    case 'error':
      return { status: 'failed', incompleteDetails: null };
    case 'stop':
    case 'stop-sequence':
    case 'tool-calls':
    case 'other':
      return { status: 'completed', incompleteDetails: null };
    default: {
      const exhaustive: never = unified;
      throw new Error(`unknown finish reason ${String(exhaustive)}`);
    }
  }
}

/** The lifecycle event that ends a stream with this status. */
export function terminalEventType(
  status: ResponsesEnding['status'],
): 'response.completed' | 'response.incomplete' | 'response.failed' {
  switch (status) {
    case 'completed':
      return 'response.completed';
    case 'incomplete':
      return 'response.incomplete';
    case 'failed':
      return 'response.failed';
    default: {
      const exhaustive: never = status;
      throw new Error(`unknown status ${String(exhaustive)}`);
    }
  }
}
