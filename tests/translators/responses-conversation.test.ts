import { expect, test } from 'bun:test';
import { responsesConversationItems } from '../../translators/passthrough/responses-conversation.ts';

/**
 * A passed-through turn as the next one sends it back (translators/passthrough/responses-conversation.ts):
 * parts kept whole, ids and status removed, system messages, built-in tool calls and encrypted
 * reasoning (another organisation's deployment could not read it) left out.
 */
test('what a stateless upstream can take back, and nothing else', () => {
  const file = { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' };
  const items = responsesConversationItems(
    [
      { role: 'system', content: 'Be brief.' },
      { type: 'message', role: 'developer', content: 'Rules.' },
      { type: 'message', id: 'msg_1', role: 'user', content: [file, { type: 'input_text', text: 'Sum up' }] },
    ],
    [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA…' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{}', status: 'completed' },
      {
        type: 'message',
        id: 'msg_2',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
      },
    ],
  );
  expect(items).toEqual([
    { type: 'message', role: 'user', content: [file, { type: 'input_text', text: 'Sum up' }] },
    { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] },
  ]);
  // A string input is the user's message.
  expect(responsesConversationItems('hello', [])).toEqual([{ type: 'message', role: 'user', content: 'hello' }]);
});
