import { json } from '../api.ts';
import { catalog } from '../catalog.ts';
import { h, uid } from '../dom.ts';
import { dateTime, integer, isoTime, usd } from '../format.ts';
import { errorNotice, errorText } from '../notice.ts';
import { statusBadge } from '../status-badge.ts';
import type { Pagination, Task } from '../types.ts';
import type { ViewContext } from '../view.ts';

const CATEGORIES = ['llm', 'image', 'video', 'audio'];
const PAGE_SIZES = ['10', '25', '50', '100'];

/** A calendar day picked in the form → Unix seconds at the start (or end) of that local day. */
function dayBound(day: string, end: boolean): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const at = end ? new Date(y, m - 1, d, 23, 59, 59) : new Date(y, m - 1, d, 0, 0, 0);
  return String(Math.floor(at.getTime() / 1000));
}

/**
 * The page's address holds the filters (so they survive reload and Back); this turns them into
 * GET /v1/tasks's own query parameters, which the API validates.
 */
function apiQuery(query: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of ['status', 'model', 'category', 'provider', 'page', 'page_size']) {
    const value = query.get(name);
    if (value) out.set(name, value);
  }
  const after = dayBound(query.get('from') ?? '', false);
  const before = dayBound(query.get('to') ?? '', true);
  if (after) out.set('created_after', after);
  if (before) out.set('created_before', before);
  return out;
}

function field(label: string, control: HTMLElement, id: string): HTMLElement {
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

function select(name: string, options: Array<[value: string, label: string]>, current: string): HTMLSelectElement {
  return h(
    'select',
    { name },
    options.map(([value, label]) => h('option', { value, selected: value === current }, label)),
  );
}

async function filterForm(ctx: ViewContext): Promise<HTMLFormElement> {
  const q = ctx.query;
  const models = await catalog().catch(() => []);
  const providers = [...new Set(models.map((m) => m.owned_by))];
  const chosen = new Set((q.get('category') ?? '').split(',').filter(Boolean));
  const modelList = uid('models');
  const providerList = uid('providers');
  const form = h(
    'form',
    { class: 'card filters', role: 'search', 'aria-label': 'Filter tasks' },
    h(
      'div',
      { class: 'filter-grid' },
      field(
        'Status',
        select(
          'status',
          [
            ['', 'Any'],
            ['processing', 'Processing'],
            ['completed', 'Completed'],
            ['failed', 'Failed'],
            ['cancelled', 'Cancelled'],
          ],
          q.get('status') ?? '',
        ),
        'f-status',
      ),
      field(
        'Model',
        h('input', {
          name: 'model',
          list: modelList,
          value: q.get('model') ?? '',
          placeholder: 'e.g. sandbox/image',
          autocomplete: 'off',
        }),
        'f-model',
      ),
      field(
        'Provider',
        h('input', {
          name: 'provider',
          list: providerList,
          value: q.get('provider') ?? '',
          placeholder: 'e.g. sandbox',
          autocomplete: 'off',
        }),
        'f-provider',
      ),
      field('Created from', h('input', { name: 'from', type: 'date', value: q.get('from') ?? '' }), 'f-from'),
      field('Created to', h('input', { name: 'to', type: 'date', value: q.get('to') ?? '' }), 'f-to'),
      field(
        'Per page',
        select(
          'page_size',
          PAGE_SIZES.map((n) => [n, n]),
          q.get('page_size') ?? '25',
        ),
        'f-page-size',
      ),
    ),
    h(
      'fieldset',
      { class: 'checks' },
      h('legend', null, 'Category'),
      CATEGORIES.map((c) =>
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'checkbox', name: 'category', value: c, checked: chosen.has(c) }),
          c,
        ),
      ),
    ),
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'submit', class: 'button primary' }, 'Apply filters'),
      h('a', { href: '/dashboard/tasks', class: 'button secondary' }, 'Clear'),
    ),
    h(
      'datalist',
      { id: modelList },
      models.map((m) => h('option', { value: m.id }, m.display_name)),
    ),
    h(
      'datalist',
      { id: providerList },
      providers.map((p) => h('option', { value: p })),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = new FormData(form);
    const next = new URLSearchParams();
    for (const name of ['status', 'model', 'provider', 'from', 'to']) {
      const value = String(values.get(name) ?? '').trim();
      if (value) next.set(name, value);
    }
    const categories = values.getAll('category').map(String);
    if (categories.length) next.set('category', categories.join(','));
    const size = String(values.get('page_size') ?? '25');
    if (size !== '25') next.set('page_size', size);
    ctx.navigate(`/dashboard/tasks${next.size ? `?${next}` : ''}`);
  });
  return form;
}

function pageLink(query: URLSearchParams, page: number, label: string, enabled: boolean, rel: string): HTMLElement {
  if (!enabled) return h('span', { class: 'button secondary disabled', 'aria-disabled': 'true' }, label);
  const next = new URLSearchParams(query);
  next.set('page', String(page));
  return h('a', { href: `/dashboard/tasks?${next}`, class: 'button secondary', rel }, label);
}

function results(tasks: Task[], pagination: Pagination, query: URLSearchParams): HTMLElement {
  const summary = `Page ${pagination.page} of ${Math.max(1, pagination.total_pages)} · ${integer(pagination.total)} task${pagination.total === 1 ? '' : 's'}`;
  if (!tasks.length)
    return h(
      'section',
      { class: 'card', 'aria-label': 'Tasks' },
      h('p', { role: 'status' }, 'No tasks match these filters.'),
    );
  return h(
    'section',
    { class: 'card', 'aria-label': 'Tasks' },
    h('p', { class: 'muted', role: 'status', 'data-testid': 'tasks-summary' }, summary),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'stack' },
        h('caption', { class: 'visually-hidden' }, `Tasks, newest first. ${summary}`),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Task', 'Model', 'Category', 'Status', 'Cost', 'Created'].map((c) =>
              h('th', { scope: 'col', class: c === 'Cost' ? 'num' : undefined }, c),
            ),
          ),
        ),
        h(
          'tbody',
          null,
          tasks.map((t) =>
            h(
              'tr',
              null,
              h(
                'td',
                { 'data-label': 'Task' },
                h('a', { href: `/dashboard/tasks/${encodeURIComponent(t.task_id)}`, class: 'mono id' }, t.task_id),
              ),
              h('td', { 'data-label': 'Model' }, h('span', { class: 'mono' }, t.model)),
              h('td', { 'data-label': 'Category' }, t.category ?? '—'),
              h('td', { 'data-label': 'Status' }, statusBadge(t.status)),
              h('td', { 'data-label': 'Cost', class: 'num' }, usd(t.cost)),
              h(
                'td',
                { 'data-label': 'Created' },
                h('time', { datetime: isoTime(t.created_at) }, dateTime(t.created_at)),
              ),
            ),
          ),
        ),
      ),
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      pageLink(query, pagination.page - 1, 'Previous', pagination.has_previous, 'prev'),
      h('span', { class: 'muted' }, `Page ${pagination.page} of ${Math.max(1, pagination.total_pages)}`),
      pageLink(query, pagination.page + 1, 'Next', pagination.has_next, 'next'),
    ),
  );
}

/** GET /v1/tasks with the same filters, newest first, a page at a time. */
export async function tasksView(ctx: ViewContext): Promise<void> {
  ctx.heading('Tasks', 'Media tasks and LLM calls, newest first.');
  const listing = json<{ data: Task[]; pagination: Pagination }>('GET', `/v1/tasks?${apiQuery(ctx.query)}`, {
    signal: ctx.signal,
  });
  listing.catch(() => undefined);
  ctx.main.append(await filterForm(ctx));
  try {
    const list = await listing;
    ctx.main.append(results(list.data, list.pagination, ctx.query));
  } catch (err) {
    // A filter the API refuses (e.g. "to" before "from") is explained under the form, which stays.
    if (!ctx.signal.aborted) ctx.main.append(errorNotice(errorText(err)));
  }
}
