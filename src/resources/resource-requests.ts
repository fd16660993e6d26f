import * as v from 'valibot';
import {
  MOTION_CATEGORIES,
  type MotionQuery,
  PHRASE_LANGUAGES,
  type PhraseLanguage,
} from '../../providers/common/resources.ts';
import { parseOr422 } from '../http/parse.ts';
import { issueMessage, issuePath } from '../http/validation.ts';
import { MAX_SAMPLES } from './keep-voice-samples.ts';
import { urlLength } from '../http/url-length.ts';
import { MotionPresetError } from './motion-error.ts';

/**
 * One of `values`, case-insensitive. A check rather than a picklist: the message then lists the
 * allowed values plainly instead of valibot's `expected ("a" | "b")`.
 */
const oneOf = <T extends string>(values: readonly T[]) =>
  v.pipe(
    v.string(),
    v.transform((s) => s.trim().toLowerCase()),
    v.check((s) => (values as readonly string[]).includes(s), `must be one of ${values.join(', ')}`),
    v.transform((s) => s as T),
  );

/** 30 presets unless asked (docs/api-contract.md, "Limits"); 100 bounds one answer. */
export const DEFAULT_MOTION_SIZE = 30;
export const MAX_MOTION_SIZE = 100;

export const MotionQuerySchema = v.object({
  size: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `must be an integer from 1 to ${MAX_MOTION_SIZE}`),
      v.transform(Number),
      v.minValue(1, `must be an integer from 1 to ${MAX_MOTION_SIZE}`),
      v.maxValue(MAX_MOTION_SIZE, `must be an integer from 1 to ${MAX_MOTION_SIZE}`),
    ),
  ),
  category: v.optional(oneOf(MOTION_CATEGORIES)),
  // `search` matches part of a preset's name.
  search: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(100, 'must be at most 100 characters'))),
});

/** `?size=&category=&search=`; a bad value is a 400 in the motion endpoint's own shape. */
export function parseMotionQuery(query: Record<string, unknown>): MotionQuery {
  const picked = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));
  const result = v.safeParse(MotionQuerySchema, picked);
  if (!result.success) {
    const issue = result.issues[0];
    const field = issuePath(issue) || 'query';
    throw new MotionPresetError(400, `${field}: ${issueMessage(issue)}`, `invalid_${field}`);
  }
  const { size, category, search } = result.output;
  return { size: size ?? DEFAULT_MOTION_SIZE, ...(category ? { category } : {}), ...(search ? { search } : {}) };
}

export const LanguageQuery = v.object({
  language: v.optional(oneOf(PHRASE_LANGUAGES)),
});

/** `?language=`, English when absent; anything outside the ten supported languages is a 422. */
export function parsePhraseLanguage(query: Record<string, unknown>): PhraseLanguage {
  const language = query.language === '' ? undefined : query.language;
  return parseOr422(LanguageQuery, { language }, 'query').language ?? 'en';
}

export const CustomVoiceBody = v.object({
  samples: v.pipe(
    v.array(
      v.pipe(v.string('must be a URL string'), urlLength(), v.url('must be an absolute URL')),
      'must be an array of URLs',
    ),
    v.minLength(1, 'must hold at least one URL'),
    v.maxLength(MAX_SAMPLES, `must hold at most ${MAX_SAMPLES} URLs`),
  ),
  name: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.nonEmpty('must not be empty'),
      v.maxLength(100, 'must be at most 100 characters'),
    ),
  ),
});
