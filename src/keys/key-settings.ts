import * as v from 'valibot';
import { isStorableString } from '../http/hostile-json.ts';

/** 9999-12-31T23:59:59Z: the last second both JavaScript dates and Postgres timestamps hold. */
const MAX_UNIX_SECONDS = 253_402_300_799;
const MAX_MODELS = 100;
/** A model id, a provider slug, or `slug/*` (model ids are `slug/name`, names may hold slashes). */
const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*(\/(\*|[A-Za-z0-9._:@+-][A-Za-z0-9._:@+/-]*))?$/;

/** C0 controls and DEL: a key's name is shown in the dashboard and the CLI, never as terminal codes. */
const hasControlCharacter = (s: string) => [...s].some((c) => (c.codePointAt(0) ?? 0) < 0x20 || c === '\x7f');

const name = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(100, 'must be at most 100 characters'),
  v.check((s) => isStorableString(s) && !hasControlCharacter(s), 'must not contain control characters'),
);
const budgetUsd = v.nullable(
  v.pipe(v.number(), v.finite('must be a finite number'), v.minValue(0), v.maxValue(1_000_000_000)),
);
const budgetPeriod = v.nullable(v.picklist(['day', 'week', 'month'], 'must be day, week or month (or null: lifetime)'));
const models = v.nullable(
  v.pipe(
    v.array(
      v.pipe(
        v.string(),
        v.maxLength(200, 'must be at most 200 characters'),
        v.regex(MODEL_PATTERN, 'must be a model id, a provider slug or slug/*'),
      ),
    ),
    v.minLength(1, 'must list at least one entry (null: every model)'),
    v.maxLength(MAX_MODELS, `must list at most ${MAX_MODELS} entries`),
  ),
);
const perMinute = v.nullable(
  v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1), v.maxValue(1_000_000_000)),
);
const expiresAt = v.nullable(
  v.pipe(
    v.number(),
    v.integer('must be Unix seconds (an integer)'),
    v.minValue(0),
    v.maxValue(MAX_UNIX_SECONDS),
    v.check((s) => s * 1000 > Date.now(), 'must be in the future'),
  ),
);

const settings = {
  budget_usd: v.optional(budgetUsd),
  budget_period: v.optional(budgetPeriod),
  models: v.optional(models),
  rpm: v.optional(perMinute),
  tpm: v.optional(perMinute),
  expires_at: v.optional(expiresAt),
};

/** `POST /v1/keys`: unknown fields are refused (422 naming them), so a typo never goes unnoticed. */
export const CreateKeyBody = v.strictObject({ name, ...settings });
/** `PATCH /v1/keys/{id}`: only the fields given change; `null` clears a setting. */
export const UpdateKeyBody = v.strictObject({ name: v.optional(name), ...settings });
export const KeyIdParam = v.pipe(v.string(), v.regex(/^\d{1,16}$/, 'expected an integer key id'));

export type CreateKeyInput = v.InferOutput<typeof CreateKeyBody>;
export type UpdateKeyInput = v.InferOutput<typeof UpdateKeyBody>;
