import * as v from 'valibot';
import { unprocessable } from './errors.ts';
import { formatIssues } from './validation.ts';

/** Validates a request part at the edge; a failure is a 422 envelope naming the field. */
export function parseOr422<TSchema extends v.GenericSchema>(
  schema: TSchema,
  value: unknown,
  what = 'body',
): v.InferOutput<TSchema> {
  if (value === undefined || value === null || value === '') {
    if (what === 'body') throw unprocessable('request body is required (JSON)');
  }
  const result = v.safeParse(schema, value);
  if (!result.success) throw unprocessable(formatIssues(result.issues));
  return result.output;
}
