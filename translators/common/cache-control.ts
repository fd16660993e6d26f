import * as v from 'valibot';
import type {
  CacheControl,
  CanonicalMessage,
  ImagePart,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolDefinition,
  ToolResultPart,
} from '../canonical/request.ts';
import { asObject, isSet, parseAt } from './validation.ts';

/**
 * `cache_control` as Anthropic defines it (`{type: 'ephemeral', ttl?: '5m' | '1h'}`). Chat
 * completions clients may put the same object on content parts (OpenRouter-style), so both
 * decoders read it here.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
 */
const CacheControlSchema = v.looseObject(
  {
    type: v.literal('ephemeral', "must be 'ephemeral'"),
    ttl: v.nullish(v.picklist(['5m', '1h'], "must be '5m' or '1h'")),
  },
  'must be an object',
);

/** The block's `cache_control`, validated (400 naming `<path>.cache_control`), or undefined. */
export function decodeCacheControl(block: unknown, path: string): CacheControl | undefined {
  const raw = asObject(block)?.cache_control;
  if (!isSet(raw)) return undefined;
  const parsed = parseAt(CacheControlSchema, raw, `${path}.cache_control`);
  return parsed.ttl ? { type: 'ephemeral', ttl: parsed.ttl } : { type: 'ephemeral' };
}

/** `part` with `cacheControl` set when there is one (never an `undefined` key). */
export function withCacheControl<T extends object>(part: T, cacheControl: CacheControl | undefined): T {
  return cacheControl ? { ...part, cacheControl } : part;
}

/** The wire object for an encoder; `{}` to spread when there is none. */
export function cacheControlField(cacheControl: CacheControl | undefined): { cache_control?: CacheControl } {
  if (!cacheControl) return {};
  return { cache_control: cacheControl.ttl ? { type: 'ephemeral', ttl: cacheControl.ttl } : { type: 'ephemeral' } };
}

type AnyPart = TextPart | ImagePart | ToolCallPart | ToolResultPart | ReasoningPart;

const marked = (part: AnyPart): boolean =>
  part.type === 'reasoning'
    ? false
    : part.cacheControl !== undefined || (part.type === 'tool-result' && part.content.some(marked));

/** True when any block of a request carries a cache mark (encoders that cannot send them warn once). */
export function requestHasCacheControl(messages: CanonicalMessage[], tools: ToolDefinition[] | undefined): boolean {
  if (tools?.some((tool) => tool.cacheControl !== undefined)) return true;
  return messages.some((message) => (message.content as readonly AnyPart[]).some(marked));
}
