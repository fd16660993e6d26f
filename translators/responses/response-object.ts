import type {
  ItemIdFn,
  ResponsesEcho,
  ResponsesErrorCode,
  ResponsesErrorObject,
  ResponsesOutputItem,
  ResponsesResponseObject,
  ResponsesStatus,
  ResponsesUsage,
} from './wire-types.ts';
import { defaultEcho } from './wire-types.ts';

/** The echo-back settings and ids an encoder needs besides the canonical response. */
export interface ResponsesEncodeContext extends Partial<ResponsesEcho> {
  /** Defaults to the canonical response's id (the service sets a `resp_…` id there). */
  responseId?: string;
  /** Item id minting; defaults to ids derived from the response id (see itemIdsFor). */
  itemId?: ItemIdFn;
  /** Unix seconds the response finished, when the caller knows it. */
  completedAt?: number;
}

/** Context values win over OpenAI's defaults, but only where they are set. */
export function resolveEcho(ctx: Partial<ResponsesEcho>): ResponsesEcho {
  const echo = defaultEcho();
  const target = echo as unknown as Record<string, unknown>;
  for (const key of Object.keys(echo) as Array<keyof ResponsesEcho>) {
    const value = ctx[key];
    if (value !== undefined) target[key] = value;
  }
  if (ctx.user !== undefined) echo.user = ctx.user;
  return echo;
}

export interface ResponseObjectArgs {
  id: string;
  model: string;
  createdAt: number;
  status: ResponsesStatus;
  output: ResponsesOutputItem[];
  usage: ResponsesUsage | null;
  echo: ResponsesEcho;
  error?: ResponsesErrorObject | null;
  incompleteDetails?: ResponsesResponseObject['incomplete_details'];
  completedAt?: number;
}

/** A full `response` object with every field the SDK types as present. */
export function buildResponseObject(args: ResponseObjectArgs): ResponsesResponseObject {
  const { echo } = args;
  const res: ResponsesResponseObject = {
    id: args.id,
    object: 'response',
    created_at: args.createdAt,
    status: args.status,
    background: false,
    error: args.error ?? null,
    incomplete_details: args.incompleteDetails ?? null,
    instructions: echo.instructions,
    max_output_tokens: echo.maxOutputTokens,
    model: args.model,
    output: args.output,
    parallel_tool_calls: echo.parallelToolCalls,
    previous_response_id: echo.previousResponseId,
    reasoning: { effort: args.echo.reasoningEffort, summary: null },
    service_tier: 'default',
    store: echo.store,
    temperature: echo.temperature,
    text: { format: echo.textFormat },
    tool_choice: echo.toolChoice,
    tools: echo.tools,
    top_p: echo.topP,
    truncation: 'disabled',
    usage: args.usage,
    metadata: echo.metadata,
  };
  if (args.completedAt !== undefined) res.completed_at = args.completedAt;
  if (echo.user !== undefined) res.user = echo.user;
  return res;
}

/** Responses error codes are a closed list; anything else reads as a server error. */
export function responsesErrorCode(code: string): ResponsesErrorCode {
  return code === 'rate_limit_exceeded' || code === 'invalid_prompt' ? code : 'server_error';
}
