import * as v from 'valibot';
import { CATEGORY_ORDER } from '../../catalog/model-object.ts';
import type { Schema } from './json-schema.ts';
import { TASK_STATUSES } from '../../db/tables/tasks.table.ts';

/**
 * Response shapes as valibot schemas (docs/api-contract.md). The gateway builds these answers
 * itself, so they are described here once and turned into JSON Schema with the request validators.
 */
const int = () => v.pipe(v.number(), v.integer());
const unixSeconds = () => v.pipe(int(), v.description('Unix seconds'));

/** `{success, code, data}` around every task, account and resource answer. */
export const envelope = (data: Schema) => v.object({ success: v.boolean(), code: int(), data });
export const ErrorEnvelope = v.object({
  success: v.literal(false),
  code: int(),
  data: v.object({ message: v.string() }),
});

export const OpenAIError = v.object({
  error: v.object({ message: v.string(), type: v.string(), code: v.nullish(v.string()), param: v.nullish(v.string()) }),
});
export const AnthropicError = v.object({
  type: v.literal('error'),
  error: v.object({ type: v.string(), message: v.string() }),
});

export const ModelObject = v.object({
  id: v.string(),
  object: v.literal('model'),
  created: unixSeconds(),
  added: unixSeconds(),
  owned_by: v.string(),
  provider_display: v.string(),
  display_name: v.string(),
  category: v.picklist(CATEGORY_ORDER),
  context_length: v.optional(int()),
  max_output: v.optional(int()),
  pricing: v.optional(v.record(v.string(), v.number())),
});
export const ModelList = v.object({ object: v.literal('list'), data: v.array(ModelObject) });

export const Account = v.object({
  user_id: int(),
  email: v.string(),
  balance_usd: v.number(),
  created_at: unixSeconds(),
  updated_at: unixSeconds(),
});
export const Signing = v.object({
  enabled: v.boolean(),
  secret: v.nullable(v.string()),
  standard_secret: v.nullable(
    v.pipe(v.string(), v.description('the same secret as Standard Webhooks verifiers take it: whsec_ + base64')),
  ),
});

export const CallbackAttempt = v.object({ sent_at: unixSeconds(), status: int(), status_text: v.string() });
export const TaskStatus = v.picklist(TASK_STATUSES);
export const Task = v.object({
  task_id: v.string(),
  model: v.string(),
  category: v.nullable(v.picklist(CATEGORY_ORDER)),
  status: TaskStatus,
  cost: v.pipe(v.number(), v.description('USD charged (0 once refunded)')),
  key_id: v.nullable(v.pipe(int(), v.description('the API key that created it'))),
  created_at: unixSeconds(),
  input: v.record(v.string(), v.unknown()),
  output: v.nullable(v.record(v.string(), v.unknown())),
  callback_url: v.nullable(v.string()),
  callback_result: v.nullable(v.array(CallbackAttempt)),
  error_message: v.optional(v.string()),
  attempts: v.optional(
    v.pipe(
      v.array(v.object({ model: v.string(), provider: v.string(), error: v.string() })),
      v.description('models tried before the one that served, when a fallback took over'),
    ),
  ),
  request_id: v.optional(v.pipe(v.string(), v.description('the x-request-id of the call that made the task'))),
});
/** One deployment of a model as routing sees it (docs/routing.md). */
export const DeploymentState = v.object({
  provider: v.string(),
  upstream_model: v.string(),
  weight: v.number(),
  state: v.picklist(['ok', 'degraded', 'cooling_down']),
  consecutive_failures: v.number(),
  cooling_down_until: v.optional(v.pipe(v.string(), v.isoTimestamp())),
});
export const TaskCreated = v.union([
  v.object({ task_id: v.string(), status: v.literal('processing') }),
  v.object({ cost: v.pipe(v.number(), v.description('dry_run: the price, nothing created')) }),
]);
export const Pagination = v.object({
  page: int(),
  page_size: int(),
  total: int(),
  total_pages: int(),
  has_next: v.boolean(),
  has_previous: v.boolean(),
});
export const SpendDay = v.object({
  day: v.pipe(v.string(), v.isoDate()),
  llm: v.number(),
  embedding: v.number(),
  image: v.number(),
  video: v.number(),
  audio: v.number(),
});

export const EmbeddingList = v.object({
  object: v.literal('list'),
  data: v.array(
    v.object({
      object: v.literal('embedding'),
      index: v.pipe(v.number(), v.integer()),
      embedding: v.union([v.array(v.number()), v.pipe(v.string(), v.description('base64 of little-endian float32'))]),
    }),
  ),
  model: v.string(),
  usage: v.object({ prompt_tokens: v.number(), total_tokens: v.number() }),
});

/** A JSON object the gateway passes on in an upstream's own format (LLM answers). */
export const AnyObject = v.record(v.string(), v.unknown());
