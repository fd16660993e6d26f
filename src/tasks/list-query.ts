import * as v from 'valibot';
import { unprocessable } from '../http/errors.ts';
import { parseOr422 } from '../http/parse.ts';
import type { TaskFilter } from './tasks.repository.ts';

const PAGE_SIZES = new Set([10, 25, 50, 100]);
const CATEGORIES = new Set(['llm', 'video', 'image', 'audio']);

const integerText = (what: string) => v.optional(v.pipe(v.string(), v.regex(/^\d+$/, `must be a non-negative integer ${what}`), v.transform(Number)));
const commaList = v.optional(v.pipe(v.string(), v.transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))));

const QuerySchema = v.object({
  page: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d*$/, 'must be a positive integer'), v.transform(Number))),
  page_size: v.optional(v.string()),
  status: v.optional(v.picklist(['processing', 'completed', 'failed'], 'must be processing, completed or failed')),
  model: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty'))),
  category: v.pipe(commaList, v.check((list) => !list || list.every((c) => CATEGORIES.has(c.toLowerCase())), 'must be a comma-separated subset of llm, video, image, audio')),
  provider: commaList,
  created_after: integerText('(Unix seconds)'),
  created_before: integerText('(Unix seconds)'),
});

export interface TaskListQuery {
  page: number;
  pageSize: number;
  filter: TaskFilter;
}

/**
 * `GET /v1/tasks` query → filter and page. Per the spec any `page_size` other than 10, 25, 50
 * or 100 becomes 25; every other bad value is a 422 naming the parameter.
 */
export function parseTaskListQuery(query: Record<string, string | undefined>): TaskListQuery {
  const q = parseOr422(QuerySchema, query, 'query');
  if (q.created_after !== undefined && q.created_before !== undefined && q.created_before < q.created_after) {
    throw unprocessable('created_before: must be greater than or equal to created_after');
  }
  const size = Number(q.page_size);
  const filter: TaskFilter = {};
  if (q.status) filter.status = q.status;
  if (q.model) filter.model = q.model;
  if (q.category?.length) filter.categories = q.category.map((c) => c.toLowerCase());
  if (q.provider?.length) filter.providers = q.provider;
  if (q.created_after !== undefined) filter.createdAfter = new Date(q.created_after * 1000);
  if (q.created_before !== undefined) filter.createdBefore = new Date(q.created_before * 1000);
  return { page: q.page ?? 1, pageSize: PAGE_SIZES.has(size) ? size : 25, filter };
}
