import * as v from 'valibot';
import type { Parameter } from './json-schema.ts';
import { operation } from './operation.ts';

/** The callback a task sends to its `callback_url` (docs/webhooks.md), one payload per ending. */
const TaskCallback = v.union([
  v.object({
    task_id: v.string(),
    status: v.literal('completed'),
    data: v.pipe(
      v.record(v.string(), v.unknown()),
      v.description('image_url, video_url or audio_url; image_urls / audio_urls'),
    ),
  }),
  v.object({ task_id: v.string(), status: v.literal('failed'), error_message: v.string() }),
  v.object({ task_id: v.string(), status: v.literal('cancelled') }),
]);

const header = (name: string, description: string, required = true): Parameter => ({
  name,
  in: 'header',
  ...(required ? { required: true } : {}),
  description,
  schema: { type: 'string' },
});

/** OpenAPI 3.1 `webhooks`: what the gateway sends, with its Standard Webhooks and own signing headers. */
export const taskWebhooks: Record<string, unknown> = {
  taskFinished: {
    post: operation({
      summary: 'A task completed, failed or was cancelled (sent at least once; retried on failure)',
      public: true,
      headers: [
        header('webhook-id', 'msg_<task_id>: the same on every retry and redelivery'),
        header('webhook-timestamp', 'Unix seconds of this attempt'),
        header('webhook-signature', 'signing on: v1,<base64 HMAC-SHA256> keyed with standard_secret', false),
        header('x-webhook-timestamp', 'signing on: Unix seconds', false),
        header('x-webhook-signature', 'signing on: hex HMAC-SHA256 of "{timestamp}.{body}" keyed with secret', false),
      ],
      body: TaskCallback,
      ok: { description: 'any 2xx within 10 s counts as delivered' },
    }),
  },
};
