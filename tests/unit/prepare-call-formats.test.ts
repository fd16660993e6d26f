import { describe, expect, test } from 'bun:test';
import type { LlmAdapter } from '../../providers/types.ts';
import { InvalidRequestError } from '../../translators/canonical/index.ts';
import type { AuthContext } from '../../src/auth/key-cache.ts';
import type { CatalogEntry } from '../../src/catalog/catalog.ts';
import type { ClientFormat } from '../../src/llm/client-format.ts';
import { anthropicMessagesFormat } from '../../src/llm/formats/anthropic-messages-format.ts';
import { decodedFor, type Served, wireFor } from '../../src/llm/llm-call.ts';
import { classifyLlmFailure } from '../../src/llm/llm-routing.ts';
import { UntranslatableBody } from '../../src/llm/untranslatable-body.ts';
import { type PrepareDeps, prepareCall } from '../../src/llm/prepare-call.ts';
import type { Router } from '../../src/routing/router.ts';
import type { Deployment } from '../../src/routing/routing-table.ts';

/**
 * A passed-through body whose plan also holds deployments of another format
 * (src/llm/prepare-call.ts): those get the whole body decoded, with that decoding's warnings,
 * never only what the passthrough reads; a body that cannot be translated keeps to the
 * deployments of its own format.
 */
const entry = {
  object: { id: 'ant/claude', category: 'llm' },
  provider: { id: 'ant' },
  config: {},
} as unknown as CatalogEntry;
const deployment = (provider: string) =>
  ({
    key: provider,
    entry,
    provider: { id: provider, kind: provider },
    upstreamModel: 'up',
    weight: 1,
  }) as unknown as Deployment;
const adapters = new Map<string, LlmAdapter>([
  ['ant', { passthroughFormat: 'anthropic-messages' } as LlmAdapter],
  ['oai', { passthroughFormat: 'chat-completions' } as LlmAdapter],
]);
const depsWith = (providers: string[]): PrepareDeps => ({
  ctx: {
    catalog: { get: (id: string) => (id === 'ant/claude' ? entry : undefined) },
    db: {},
  } as unknown as PrepareDeps['ctx'],
  adapters,
  router: { plan: () => providers.map(deployment) } as unknown as Router,
});
const auth = { accountId: 1 } as AuthContext;
const request = () => new Request('http://gateway.test/v1/messages', { method: 'POST' });
const body = {
  model: 'ant/claude',
  max_tokens: 100,
  top_k: 5,
  messages: [
    {
      role: 'user',
      content: [
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
        { type: 'text', text: 'Summarise the contract' },
      ],
    },
  ],
};
const servedBy = (provider: string) => ({ adapter: adapters.get(provider) }) as Served;

describe('prepareCall across formats', () => {
  test('a plan of one format: passed through, no second decoding', async () => {
    const call = await prepareCall(depsWith(['ant']), anthropicMessagesFormat, body, auth, request());
    expect(call.wire?.format).toBe('anthropic-messages');
    expect(call.translation).toBeUndefined();
  });

  test('a plan with a chat deployment: it gets the whole body decoded (when first tried), and its warnings', async () => {
    let decodes = 0;
    const counted: ClientFormat = {
      ...anthropicMessagesFormat,
      decode: (b) => {
        decodes++;
        return anthropicMessagesFormat.decode(b);
      },
    };
    const call = await prepareCall(depsWith(['ant', 'oai']), counted, body, auth, request());
    // The passthrough's reading only, until a deployment of another format is tried.
    expect(decodes).toBe(1);
    call.served = servedBy('ant');
    expect(wireFor(call)?.format).toBe('anthropic-messages');
    expect(decodedFor(call).warnings).toEqual([]);
    call.served = servedBy('oai');
    expect(wireFor(call)).toBeUndefined();
    const fields = decodedFor(call).warnings.map((w) => w.field);
    expect(fields).toContain('top_k');
    expect(fields).toContain('messages[0].content[0]');
    decodedFor(call);
    expect(decodes).toBe(2);
  });

  test('a body only its own format takes goes on to a deployment of that format', async () => {
    const own = anthropicMessagesFormat.passthrough as NonNullable<ClientFormat['passthrough']>;
    const strict: ClientFormat = {
      ...anthropicMessagesFormat,
      decode: (b) => {
        if ((b as Record<string, unknown>).refuse_me !== undefined)
          throw new InvalidRequestError('refuse_me: cannot be translated', 'refuse_me');
        return anthropicMessagesFormat.decode(b);
      },
      // What the passthrough reads of a body leaves the field to the upstream.
      passthrough: {
        ...own,
        view: (b) => {
          const { refuse_me: _, ...rest } = own.view ? own.view(b) : b;
          return rest;
        },
      },
    };
    const odd = { ...body, refuse_me: true };
    // Tried on the chat deployment, the body cannot be translated: the next one (its own format) takes it.
    const call = await prepareCall(depsWith(['oai', 'ant']), strict, odd, auth, request());
    call.served = servedBy('oai');
    expect(() => decodedFor(call)).toThrow(UntranslatableBody);
    expect(classifyLlmFailure(new UntranslatableBody(new InvalidRequestError('x')), new AbortController().signal)).toBe(
      'next-deployment',
    );
    call.served = servedBy('ant');
    expect(decodedFor(call)).toBe(call.decoded);
  });
});
