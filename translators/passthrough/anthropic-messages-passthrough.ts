import { formatSse } from '../common/sse.ts';
import { asObject } from '../common/validation.ts';
import { lacksId, withId } from './fill-missing-id.ts';
import { objectOf, renameModel, type PassthroughRules } from './passthrough-rules.ts';
import { renameBodyModel } from './rename-body-model.ts';

/**
 * Anthropic Messages → Anthropic Messages: events forwarded with their `event:` names; the model
 * in `message_start` renamed to the gateway's id.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
export const anthropicPassthrough: PassthroughRules = {
  classify(message) {
    if (!objectOf(message)) return 'garbage';
    if (message.event === 'message_stop') return 'terminal';
    return message.event === 'error' ? 'error' : 'data';
  },
  forward(message, ctx) {
    const data = message.event === 'message_start' ? renameModel(message.data, ctx) : message.data;
    return formatSse(data, message.event);
  },
  errorEvent: (_code, message) => formatSse({ type: 'error', error: { type: 'api_error', message } }, 'error'),
  forwardBody: (text, ctx) => renameBodyModel(text, ctx.gatewayModel),
  keepsUpstreamId: true,
  // Only `message_start` names the message.
  fillId(message, id) {
    if (message.event !== 'message_start') return undefined;
    const event = objectOf(message);
    const inner = asObject(event?.message);
    return event && inner && lacksId(inner.id) ? JSON.stringify({ ...event, message: withId(inner, id) }) : undefined;
  },
};
