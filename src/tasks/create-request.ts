import * as v from 'valibot';
import { unprocessable } from '../http/errors.ts';
import { findUnstorableString } from '../http/hostile-json.ts';
import { parseOr422 } from '../http/parse.ts';
import { urlLength } from '../http/url-length.ts';

/** `POST /v1/tasks` (docs/api-contract.md); `input` is validated afterwards against the model's own schema. */
export const CreateTaskSchema = v.object({
  model: v.pipe(v.string(), v.nonEmpty('must not be empty')),
  input: v.record(v.string(), v.unknown(), 'must be an object'),
  callback_url: v.optional(
    v.nullable(
      v.pipe(
        v.string(),
        urlLength(),
        v.url('must be an absolute URL'),
        // valibot runs every step of a pipe even after `url` failed, so this one must not throw.
        v.check((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'must be an http or https URL'),
      ),
    ),
  ),
  dry_run: v.optional(v.boolean()),
});

export interface CreateTaskRequest {
  model: string;
  input: Record<string, unknown>;
  callbackUrl?: string;
  dryRun: boolean;
}

export function parseCreateTask(body: unknown, inputPath = 'input'): CreateTaskRequest {
  const req = parseOr422(CreateTaskSchema, body);
  // What Postgres cannot store (NUL, unpaired surrogates) or nests too deep is refused here,
  // naming the field, so it reaches neither a lookup nor the batched insert of the admitter.
  const bad =
    findUnstorableString(req.model, 'model') ??
    findUnstorableString(req.input, inputPath) ??
    findUnstorableString(req.callback_url, 'callback_url');
  if (bad) throw unprocessable(`${bad.path || 'body'}: ${bad.reason}`);
  return {
    model: req.model,
    input: req.input,
    callbackUrl: req.callback_url ?? undefined,
    dryRun: req.dry_run ?? false,
  };
}

/**
 * Legacy `POST /{model-slug}/generate`: the model's fields at the top level, `callback_url` (and
 * `dry_run`) beside them.
 */
export function parseLegacyGenerate(model: string, body: unknown): CreateTaskRequest {
  const fields = parseOr422(v.record(v.string(), v.unknown(), 'request body must be a JSON object'), body);
  const { callback_url, dry_run, ...input } = fields;
  // The model's fields are the body's own top-level fields, and are named so.
  return parseCreateTask({ model, input, callback_url, dry_run }, '');
}
