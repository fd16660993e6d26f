import { FINISH_REASON_TABLE, fromResponsesStatus, type FinishReason } from '../canonical/finish-reason.ts';

export { fromResponsesStatus };

export interface ResponsesEnding {
  status: 'completed' | 'incomplete' | 'failed';
  incompleteDetails: { reason: 'max_output_tokens' | 'content_filter' } | null;
}

/** A canonical finish → the response's `status` and `incomplete_details`, from the shared table. */
export function toResponsesEnding(finish: FinishReason): ResponsesEnding {
  const ending = FINISH_REASON_TABLE[finish.unified].responses;
  return {
    status: ending.status,
    incompleteDetails: ending.incompleteReason ? { reason: ending.incompleteReason } : null,
  };
}

/** The lifecycle event that ends a stream with this status. */
export function terminalEventType(status: ResponsesEnding['status']): 'response.completed' | 'response.incomplete' | 'response.failed' {
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
