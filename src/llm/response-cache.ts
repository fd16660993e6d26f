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
 * What one account's cached answers may take of the store at once. A client chooses the ttl (up
 * to 30 days) and can make answers large for little (a Responses answer echoes its
 * `instructions`): 100 calls of a megabyte each for $0.0006 took 107 MB of Redis for 30 days.
 * Past the bound the account's answers are not cached until what it stored has expired.
 */
export const MAX_ACCOUNT_CACHED_BYTES = 256 * (1 << 20);

/** The bytes an account's cached answers count, kept as long as the longest-lived of them. */
const bytesKey = (accountId: number) => `llmcache:bytes:${accountId}`;

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
    private readonly maxAccountBytes = MAX_ACCOUNT_CACHED_BYTES,
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

  async put(accountId: number, key: string, answer: CachedAnswer, ttlS: number): Promise<void> {
    try {
      const text = JSON.stringify(answer);
      if (text.length > MAX_CACHED_BYTES) return;
      if (!(await this.count(accountId, text.length, ttlS * 1000))) return;
      await this.store.set(key, text, ttlS * 1000);
    } catch (err) {
      this.log.warn('response cache write failed', errorFields(err));
    }
  }

  /**
   * Counts `bytes` against the account's bound; false when they do not fit. The count lives as
   * long as the longest-lived answer it counts, so it never forgets bytes still stored. Read and
   * written apart: answers stored at the same moment may pass the bound by one answer each.
   */
  private async count(accountId: number, bytes: number, ttlMs: number): Promise<boolean> {
    const used = Number((await this.store.get(bytesKey(accountId))) ?? 0);
    if (used + bytes > this.maxAccountBytes) return false;
    const left = await this.store.ttl(bytesKey(accountId));
    await this.store.set(bytesKey(accountId), String(used + bytes), Math.max(left, ttlMs));
    return true;
  }
}
