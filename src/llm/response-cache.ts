import { canonicalJson } from '../ops/canonical-json.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import type { Store } from '../store/store.ts';
import type { ClientFormatName, DecodedClientRequest } from './client-format.ts';

/**
 * An answer as the client received it: the JSON body's text, or the stream's text pieces in
 * order. (`json`, the body as an object, is what earlier versions stored; still served.)
 */
export type CachedAnswer =
  | { kind: 'json-text'; text: string; headers: Record<string, string> }
  | { kind: 'json'; body: unknown; headers: Record<string, string> }
  | { kind: 'stream'; chunks: string[]; headers: Record<string, string> };

/** Larger answers are not cached: the store is shared memory. */
export const MAX_CACHED_BYTES = 1 << 20;

/**
 * The opt-in exact response cache (docs/routing.md), in the shared store so every instance serves
 * what any instance stored. The key is a SHA-256 of the account, the requested model, the client
 * format and the canonical request (after decoding, so the same call spelled with other
 * whitespace or key order hits), and of a passed-through call's upstream body too; a stored
 * stream is replayed event by event.
 */
export class ResponseCache {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /**
   * Everything that shapes the answer the client gets: the canonical request, and what its
   * format's decoder keeps beside it (a chat client's trailing usage chunk; a Responses client's
   * `store`, `previous_response_id`, metadata and the other fields its response object echoes),
   * and the models that may serve it (`plan`: a key kept to some models never gets an answer a
   * fallback it may not use gave). `wire`: the body a passed-through call sends its upstream
   * (`LlmCall.wire`). The upstream reads fields the canonical request has no form for (built-in
   * tools, settings the gateway does not model), so two such calls are the same only when their
   * bodies are, keys in any order.
   */
  key(
    accountId: number,
    modelId: string,
    format: ClientFormatName,
    decoded: Pick<DecodedClientRequest, 'request' | 'includeUsage' | 'responses'>,
    plan: readonly string[],
    wire?: Record<string, unknown>,
  ): string {
    const hasher = new Bun.CryptoHasher('sha256');
    hasher.update(
      JSON.stringify([
        accountId,
        modelId,
        format,
        decoded.request,
        decoded.includeUsage,
        decoded.responses ?? null,
        plan,
      ]),
    );
    if (wire) hasher.update(`\n${canonicalJson(wire)}`);
    return `llmcache:${hasher.digest('hex')}`;
  }

  /** A miss when the store cannot answer: the cache never fails a call. */
  async get(key: string): Promise<CachedAnswer | undefined> {
    try {
      const text = await this.store.get(key);
      if (text === null) return undefined;
      const answer = JSON.parse(text) as CachedAnswer;
      return answer.kind === 'json-text' || answer.kind === 'json' || answer.kind === 'stream' ? answer : undefined;
    } catch (err) {
      this.log.warn('response cache read failed', errorFields(err));
      return undefined;
    }
  }

  async put(key: string, answer: CachedAnswer, ttlS: number): Promise<void> {
    try {
      const text = JSON.stringify(answer);
      if (text.length > MAX_CACHED_BYTES) return;
      await this.store.set(key, text, ttlS * 1000);
    } catch (err) {
      this.log.warn('response cache write failed', errorFields(err));
    }
  }
}
