import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { InvalidRequestError } from '../../translators/canonical/index.ts';
import {
  anthropicCountTokensRequest,
  anthropicPassthroughRequest,
  responsesPassthroughRequest,
} from '../../translators/passthrough/index.ts';

/**
 * The passthrough builders walk bodies the decoder has only partly read (documents, Anthropic's
 * tools, Responses parts): whatever shape they get, they pass it, or refuse it by name
 * (InvalidRequestError, a 400), and never change the client's body.
 */
describe('passthrough requests under hostile input', () => {
  const isRefusal = (err: unknown) => err instanceof InvalidRequestError;
  const anyJson = fc.jsonValue({ maxDepth: 4 });
  const blocks = fc.array(
    fc.oneof(
      anyJson,
      fc.record({
        type: fc.constantFrom('document', 'search_result', 'tool_result', 'thinking', 'image'),
        source: anyJson,
        content: anyJson,
      }),
    ),
    { maxLength: 6 },
  );
  const tools = fc.array(
    fc.oneof(
      anyJson,
      fc.record({
        type: fc.oneof(fc.string(), fc.constantFrom('web_search_20250305', 'bash_20250124', 'custom')),
        name: fc.string(),
        max_uses: anyJson,
      }),
    ),
    { maxLength: 4 },
  );

  test('property: a Messages body of any shape is passed or refused by name, never an unexpected error', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ role: fc.constantFrom('user', 'assistant'), content: fc.oneof(fc.string(), blocks) })),
        tools,
        (messages, declared) => {
          const body = { model: 'm', max_tokens: 1, messages, tools: declared };
          const before = JSON.stringify(body);
          try {
            const built = anthropicPassthroughRequest(body, []);
            expect(Number.isFinite(built.uncounted.textTokens)).toBe(true);
            expect(built.uncounted.perCallTools?.maxCalls ?? 0).toBeLessThanOrEqual(1_000 * declared.length);
            anthropicCountTokensRequest(body);
          } catch (err) {
            expect(isRefusal(err)).toBe(true);
          }
          expect(JSON.stringify(body)).toBe(before);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('property: a Responses body of any shape is passed or refused by name, never an unexpected error', () => {
    const parts = fc.array(
      fc.oneof(
        anyJson,
        fc.record({
          type: fc.constantFrom('input_file', 'input_image', 'input_text'),
          file_id: anyJson,
          text: anyJson,
        }),
      ),
      { maxLength: 4 },
    );
    const items = fc.array(
      fc.oneof(
        anyJson,
        fc.record({ role: fc.constant('user'), content: fc.oneof(fc.string(), parts) }),
        fc.record({
          type: fc.constantFrom('function_call_output', 'computer_call_output', 'web_search_call'),
          output: fc.oneof(anyJson, parts),
        }),
      ),
      { maxLength: 5 },
    );
    const responsesTools = fc.array(
      fc.oneof(
        anyJson,
        fc.record({
          type: fc.oneof(fc.string(), fc.constantFrom('web_search', 'file_search', 'code_interpreter', 'function')),
          container: anyJson,
        }),
      ),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(items, responsesTools, anyJson, (input, declared, maxToolCalls) => {
        const body = { model: 'm', input, tools: declared, max_tool_calls: maxToolCalls };
        const before = JSON.stringify(body);
        try {
          const built = responsesPassthroughRequest(body, []);
          expect(Number.isFinite(built.uncounted.textTokens)).toBe(true);
          expect(built.uncounted.perCallTools?.maxCalls ?? 0).toBeLessThanOrEqual(1_000);
        } catch (err) {
          expect(isRefusal(err)).toBe(true);
        }
        expect(JSON.stringify(body)).toBe(before);
      }),
      { numRuns: 500 },
    );
  });
});
