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
 * Past the bound the account's answers are not cached until some of what it stored expires.
 */
export const MAX_ACCOUNT_CACHED_BYTES = 256 * (1 << 20);

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Longest a cached answer lives (the `ttl` bound of docs/routing.md), in days. */
const MAX_TTL_DAYS = 30;
/** Answers expiring within this many hours are counted by the hour, later ones by the day. */
const HOURLY_SPAN = 26;
/**
 * The bytes of an account's cached answers that expire within one hour (`h`, hours since the
 * epoch) or one day (`d`): each count expires when its span ends, so the live counts sum what
 * the account has stored now, give or take one span past an answer's expiry.
 */
const bytesKey = (accountId: number, span: 'h' | 'd', at: number) => `llmcache:bytes:${accountId}:${span}:${at}`;

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
      // Stored first, so the next identical call finds it at once; counted after, and taken back
      // when it does not fit the account's bound.
      await this.store.set(key, text, ttlS * 1000);
      if (!(await this.count(accountId, text.length, ttlS * 1000))) await this.store.del(key);
    } catch (err) {
      this.log.warn('response cache write failed', errorFields(err));
    }
  }

  /**
   * Counts `bytes` against the account's bound; false when they do not fit. Bytes are counted
   * (atomically) by the hour or day their answer expires (`bytesKey`), each count read in one
   * round trip, so the sum is what the account has stored now, never a running total. Answers
   * stored at the same moment may each pass the check: the bound is passed by those.
   */
  private async count(accountId: number, bytes: number, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const hour = Math.floor(now / HOUR_MS);
    const day = Math.floor(now / DAY_MS);
    const keys = [
      ...Array.from({ length: HOURLY_SPAN + 1 }, (_, i) => bytesKey(accountId, 'h', hour + i)),
      ...Array.from({ length: MAX_TTL_DAYS + 2 }, (_, i) => bytesKey(accountId, 'd', day + i)),
    ];
    const used = (await this.store.getMany(keys)).reduce((sum, n) => sum + Number(n ?? 0), 0);
    if (used + bytes > this.maxAccountBytes) return false;
    const expires = now + ttlMs;
    if (ttlMs <= (HOURLY_SPAN - 1) * HOUR_MS) {
      const at = Math.floor(expires / HOUR_MS);
      await this.store.incr(bytesKey(accountId, 'h', at), bytes, (at + 1) * HOUR_MS - now);
    } else {
      const at = Math.floor(expires / DAY_MS);
      await this.store.incr(bytesKey(accountId, 'd', at), bytes, (at + 1) * DAY_MS - now);
    }
    return true;
  }
}
