import { formatSse, sseEvent } from '../common/sse.ts';
import { repairChatChunk } from './chat-chunk-repair.ts';
import { lacksId, withId } from './fill-missing-id.ts';
import { objectOf, renameModel, type PassthroughRules } from './passthrough-rules.ts';
import { renameBodyModel } from './rename-body-model.ts';

/**
 * A chunk's `"usage":null` removed: by text as OpenAI writes it (compact, never first), else — a
 * server that spaces or orders its JSON otherwise — from a parse of the chunk.
 */
function withoutNullUsage(data: string): string {
  const stripped = data.replaceAll(',"usage":null', '');
  if (stripped !== data) return stripped;
  const { usage: _, ...rest } = JSON.parse(data) as Record<string, unknown>;
  return JSON.stringify(rest);
}

/**
 * Chat completions → chat completions. The gateway always asks the upstream for usage; when the
 * client did not, the usage-only chunk and the `"usage":null` fields are held back so the client
 * sees what OpenAI would have sent it. Chunks the SDK would refuse are repaired (chat-chunk-repair.ts).
 * @see https://platform.openai.com/docs/api-reference/chat-streaming
 */
export const chatPassthrough: PassthroughRules = {
  classify(message) {
    if (message.data === '[DONE]') return 'terminal';
    const parsed = objectOf(message);
    if (!parsed) return 'garbage';
    return 'error' in parsed && parsed.error ? 'error' : 'data';
  },
  forward(message, ctx) {
    if (message.data === '[DONE]') return 'data: [DONE]\n\n';
    // Read from the event's parse (its reader made one), not by scanning the text: this runs per chunk.
    const chunk = objectOf(message);
    const choices = chunk?.choices;
    const repaired = ctx.chatRepair ? repairChatChunk(message.data, chunk, ctx.chatRepair) : message.data;
    let data = renameModel(repaired, ctx);
    if (!ctx.includeUsage) {
      if (Array.isArray(choices) && choices.length === 0) return null;
      if (chunk?.usage === null) data = withoutNullUsage(data);
    }
    // Renaming, repairing and dropping `usage` write no raw line break: only the upstream's data can hold one.
    return sseEvent(data, message.data.includes('\n'));
  },
  errorEvent: (code, message) => formatSse({ error: { message, type: 'server_error', param: null, code } }),
  forwardBody: (text, ctx) => renameBodyModel(text, ctx.gatewayModel),
  keepsUpstreamId: true,
  // Every chunk carries the completion's id.
  fillId(message, id) {
    const chunk = objectOf(message);
    return chunk && lacksId(chunk.id) ? JSON.stringify(withId(chunk, id)) : undefined;
  },
};
