import * as v from 'valibot';
import { unprocessable } from '../http/errors.ts';
import { parseOr422 } from '../http/parse.ts';
import { isStorableString } from '../http/hostile-json.ts';
import type { TaskFilter } from './tasks.repository.ts';
import { TASK_STATUSES } from '../db/tables/tasks.table.ts';

const PAGE_SIZES = new Set([10, 25, 50, 100]);
const CATEGORIES = new Set(['llm', 'embedding', 'video', 'image', 'audio']);

/** Highest page asked for: far past any real list, and its offset stays an exact integer. */
export const MAX_PAGE = 1_000_000;
/** 9999-12-31T23:59:59Z: the last second both JavaScript dates and Postgres timestamps hold. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/** Digits only, compared as text first so `99999999999999999999` never becomes a lossy number. */
const boundedInteger = (min: number, max: number, message: string) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,16}$/, message),
    v.transform(Number),
    v.check((n) => Number.isSafeInteger(n) && n >= min && n <= max, message),
  );
const storable = v.check(
  (s: string) => isStorableString(s),
  'must not contain the NUL character or unpaired surrogates',
);
const commaList = v.optional(
  v.pipe(
    v.string(),
    storable,
    v.transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  ),
);
const unixSeconds = v.optional(
  boundedInteger(0, MAX_UNIX_SECONDS, `must be Unix seconds, an integer from 0 to ${MAX_UNIX_SECONDS}`),
);

export const TaskListQuerySchema = v.object({
  page: v.optional(boundedInteger(1, MAX_PAGE, `must be a positive integer up to ${MAX_PAGE}`)),
  page_size: v.optional(v.pipe(v.string(), v.description('10, 25, 50 or 100; any other value becomes 25'))),
  status: v.optional(v.picklist(TASK_STATUSES, 'must be processing, completed, failed or cancelled')),
  model: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty'), storable)),
  category: v.pipe(
    commaList,
    v.check(
      (list) => !list || list.every((c) => CATEGORIES.has(c.toLowerCase())),
      'must be a comma-separated subset of llm, embedding, video, image, audio',
    ),
    v.description('comma list of llm, embedding, video, image, audio'),
  ),
  provider: v.pipe(commaList, v.description('comma list of provider slugs')),
  created_after: unixSeconds,
  created_before: unixSeconds,
  key_id: v.optional(boundedInteger(1, 2_147_483_647, 'must be an API key id (a positive integer)')),
});

export interface TaskListQuery {
  page: number;
  pageSize: number;
  filter: TaskFilter;
}

/**
 * `GET /v1/tasks` query → filter and page. By the API contract, any `page_size` other than 10, 25, 50
 * or 100 becomes 25; every other bad value is a 422 naming the parameter, including numbers
 * too large for their column and strings Postgres cannot hold. `created_after` and
 * `created_before` are whole Unix seconds, both inclusive (the repository compares them so).
 */
export function parseTaskListQuery(query: Record<string, string | undefined>): TaskListQuery {
  const q = parseOr422(TaskListQuerySchema, query, 'query');
  if (q.created_after !== undefined && q.created_before !== undefined && q.created_before < q.created_after) {
    throw unprocessable('created_before: must be greater than or equal to created_after');
  }
  const size = Number(q.page_size);
  const filter: TaskFilter = {};
  if (q.status) filter.status = q.status;
  if (q.model) filter.model = q.model;
  if (q.category?.length) filter.categories = q.category.map((c) => c.toLowerCase());
  if (q.provider?.length) filter.providers = q.provider;
  if (q.key_id !== undefined) filter.keyId = q.key_id;
  if (q.created_after !== undefined) filter.createdAfter = new Date(q.created_after * 1000);
  if (q.created_before !== undefined) filter.createdBefore = new Date(q.created_before * 1000);
  return { page: q.page ?? 1, pageSize: PAGE_SIZES.has(size) ? size : 25, filter };
}
