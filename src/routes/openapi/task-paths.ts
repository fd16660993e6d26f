import * as v from 'valibot';
import { CreateTaskSchema } from '../../tasks/create-request.ts';
import { TaskListQuerySchema } from '../../tasks/list-query.ts';
import { FileUrlBody } from '../../uploads/upload-service.ts';
import type { Parameter } from './json-schema.ts';
import { operation } from './operation.ts';
import { CallbackAttempt, envelope, ErrorEnvelope, Pagination, Task, TaskCreated } from './shapes.ts';

const errors = (...codes: number[]) => ({ shape: ErrorEnvelope, codes });
const idempotencyKey: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'same key and body within 24 h: the same task, charged once',
};
const TaskId = v.object({ task_id: v.string() });
const created = { description: 'task created, or its price (dry_run)', schema: envelope(TaskCreated) };
/** The upload's JSON variants are read by a streaming parser, not a validator: their shape is stated here. */
const Base64Body = v.object({ base64: v.pipe(v.string(), v.description('raw base64 or a data: URI')) });
const MultipartBody = v.object({ file: v.pipe(v.string(), v.description('the file part')) });

/** Tasks, their callbacks, uploads and stored files. */
export const taskOpenApiPaths: Record<string, unknown> = {
  '/v1/tasks': {
    post: operation({
      summary: 'Create a media task (or price it with dry_run)',
      headers: [idempotencyKey],
      body: CreateTaskSchema,
      ok: created,
      errors: errors(401, 402, 422, 429),
    }),
    get: operation({
      summary: 'List tasks, newest first',
      description: 'page_size is 10, 25, 50 or 100; any other value becomes 25.',
      query: TaskListQuerySchema,
      ok: {
        description: 'tasks and pagination',
        schema: v.object({ ...envelope(v.array(Task)).entries, pagination: Pagination }),
      },
      errors: errors(401, 422),
    }),
  },
  '/v1/tasks/{task_id}': {
    get: operation({
      summary: 'One task',
      path: TaskId,
      ok: { description: 'task', schema: envelope(Task) },
      errors: errors(401, 404),
    }),
  },
  '/v1/tasks/{task_id}/events': {
    get: operation({
      summary: 'Live status: server-sent events, the task record at once and on every change, then the end',
      description:
        '`event: status` with the record of GET /v1/tasks/{task_id} as data, sent at once and again on every change ' +
        '(from any instance); `: heartbeat` comments in between; the stream ends after a terminal status ' +
        '(completed, failed, cancelled). A finished task gives its record and the end at once.',
      path: TaskId,
      ok: { description: 'event stream', content: { 'text/event-stream': v.string() } },
      errors: errors(401, 404, 429),
    }),
  },
  '/v1/tasks/{task_id}/cancel': {
    post: operation({
      summary: 'Cancel a processing task: refunded in full (cost 0), upstream job cancelled where the provider can',
      description:
        'The answer is the cancelled task. Its webhook is sent with status "cancelled". When the upstream job ' +
        'could not be cancelled (the provider has no cancel), the x-gateway-warnings header says so. 409 once ' +
        'the task has finished.',
      path: TaskId,
      ok: { description: 'the cancelled task', schema: envelope(Task) },
      errors: errors(401, 404, 409),
    }),
  },
  '/v1/tasks/{task_id}/callbacks/redeliver': {
    post: operation({
      summary: 'Send the callback once more (the log holds at most 10 attempts)',
      path: TaskId,
      ok: { description: 'the new log entry', schema: envelope(CallbackAttempt) },
      errors: errors(401, 404, 409, 422),
    }),
  },
  '/{model_slug}/generate': {
    post: operation({
      summary:
        'Legacy per-model creation: the model id with / as - (sandbox-image), or the bare model name when unique',
      description: "The body is the model's input fields, with callback_url and dry_run beside them.",
      path: v.object({ model_slug: v.string() }),
      headers: [idempotencyKey],
      body: v.record(v.string(), v.unknown()),
      ok: created,
      errors: errors(401, 402, 404, 422),
    }),
  },
  '/upload': {
    put: operation({
      summary:
        'Store a file ({upload_url}/upload): JSON {base64} (raw or data URI), JSON {file_url}, or multipart `file`',
      body: { 'application/json': v.union([Base64Body, FileUrlBody]), 'multipart/form-data': MultipartBody },
      ok: {
        description: 'stored',
        schema: v.object({ success: v.literal(true), file_url: v.pipe(v.string(), v.url()) }),
      },
      errors: errors(401, 413, 415, 422, 429),
    }),
  },
  '/files/{file}': {
    get: operation({
      summary: 'A stored file (task output or upload); the unguessable name is the capability, no key needed',
      public: true,
      path: v.object({ file: v.string() }),
      headers: [{ name: 'Range', in: 'header', schema: { type: 'string' } }],
      ok: { 200: { description: 'the bytes' }, 206: { description: 'a range' } },
      other: { 304: 'not modified', 404: 'no such file', 416: 'range not satisfiable' },
    }),
  },
};
