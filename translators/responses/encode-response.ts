import type { CanonicalResponse } from '../canonical/response.ts';
import { toResponsesEnding } from './finish-reason.ts';
import { itemIdsFor, responseOutputItems } from './output-items.ts';
import { buildResponseObject, resolveEcho, type ResponsesEncodeContext } from './response-object.ts';
import { toResponsesUsage } from './usage.ts';
import type { ResponsesResponseObject } from './wire-types.ts';

/**
 * A finished canonical response → the non-stream `response` object the client receives.
 * `model` is `res.model` (the gateway's id). A `length` or `content-filter` ending reads
 * `status: incomplete` with its reason; an `error` ending reads `status: failed`.
 */
export function encodeResponsesResponse(
  res: CanonicalResponse,
  ctx: ResponsesEncodeContext = {},
): ResponsesResponseObject {
  const id = ctx.responseId ?? res.id;
  const ending = toResponsesEnding(res.finishReason);
  return buildResponseObject({
    id,
    model: res.model,
    createdAt: res.created,
    status: ending.status,
    output: responseOutputItems(res, ctx.itemId ?? itemIdsFor(id)),
    usage: toResponsesUsage(res.usage),
    echo: resolveEcho(ctx),
    error:
      ending.status === 'failed' ? { code: 'server_error', message: 'The model failed to generate a response.' } : null,
    incompleteDetails: ending.incompleteDetails,
    completedAt: ending.status === 'completed' ? ctx.completedAt : undefined,
  });
}
