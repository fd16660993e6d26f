import { data } from '../api.ts';
import { catalog } from '../catalog.ts';
import { copyButton } from '../copy-button.ts';
import { h } from '../dom.ts';
import { integer, usd } from '../format.ts';
import type { Category, Model, Pricing } from '../types.ts';
import type { ViewContext } from '../view.ts';

/** One deployment as `GET /v1/routing` reports it (docs/routing.md). */
interface DeploymentState {
  provider: string;
  upstream_model: string;
  weight: number;
  state: 'ok' | 'degraded' | 'cooling_down';
  consecutive_failures: number;
  cooling_down_until?: string;
}
type Routing = Record<string, DeploymentState[]>;

const STATE_TEXT: Record<DeploymentState['state'], string> = {
  ok: 'ok',
  degraded: 'recent failures',
  cooling_down: 'cooling down',
};

/** A model's deployments under its provider, shown when there are several or one is unwell. */
function deploymentsList(list: DeploymentState[] | undefined): HTMLElement | null {
  if (!list || (list.length < 2 && list.every((d) => d.state === 'ok'))) return null;
  return h(
    'ul',
    { class: 'deployments', 'aria-label': 'Deployments' },
    list.map((d) =>
      h(
        'li',
        null,
        `${d.provider} (${d.upstream_model}, weight ${d.weight}): ${STATE_TEXT[d.state]}`,
        d.state !== 'ok' ? `, ${d.consecutive_failures} failures in a row` : '',
        d.cooling_down_until ? ` until ${new Date(d.cooling_down_until).toLocaleTimeString()}` : '',
      ),
    ),
  );
}

const TITLES: Record<Category, string> = {
  llm: 'LLM',
  embedding: 'Embedding',
  image: 'Image',
  video: 'Video',
  audio: 'Audio',
};

/** The catalog's price fields in words. */
function priceText(p: Pricing | undefined): string {
  if (!p) return 'Depends on the input; a dry run (dry_run: true) shows it';
  const parts: string[] = [];
  // Embedding models price input only.
  if (p.input_per_mtok !== undefined && p.output_per_mtok === undefined)
    parts.push(`${usd(p.input_per_mtok)} per 1M input tokens`);
  else if (p.input_per_mtok !== undefined || p.output_per_mtok !== undefined) {
    parts.push(`${usd(p.input_per_mtok ?? 0)} input · ${usd(p.output_per_mtok ?? 0)} output per 1M tokens`);
  }
  if (p.per_request !== undefined) parts.push(`${usd(p.per_request)} per request`);
  if (p.per_image !== undefined) parts.push(`${usd(p.per_image)} per image`);
  if (p.per_second !== undefined) parts.push(`${usd(p.per_second)} per second`);
  if (p.per_1k_chars !== undefined) parts.push(`${usd(p.per_1k_chars)} per 1,000 characters`);
  if (p.minimum !== undefined) parts.push(`at least ${usd(p.minimum)}`);
  return parts.join('; ') || 'Free';
}

function table(category: Category, models: Model[], routing: Routing): HTMLElement {
  const llm = category === 'llm';
  const heads = ['Model', 'Model id', 'Provider', 'Price', ...(llm ? ['Context', 'Max output'] : [])];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'stack' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          heads.map((c) =>
            h('th', { scope: 'col', class: c === 'Context' || c === 'Max output' ? 'num' : undefined }, c),
          ),
        ),
      ),
      h(
        'tbody',
        null,
        models.map((m) =>
          h(
            'tr',
            null,
            h('th', { scope: 'row', 'data-label': 'Model' }, m.display_name),
            h(
              'td',
              { 'data-label': 'Model id' },
              h(
                'span',
                { class: 'id-cell' },
                h('code', null, m.id),
                copyButton(() => m.id, `Copy model id ${m.id}`),
              ),
            ),
            h('td', { 'data-label': 'Provider' }, m.provider_display ?? m.owned_by, deploymentsList(routing[m.id])),
            h('td', { 'data-label': 'Price' }, priceText(m.pricing)),
            llm
              ? h(
                  'td',
                  { 'data-label': 'Context', class: 'num' },
                  m.context_length ? `${integer(m.context_length)} tokens` : '—',
                )
              : null,
            llm
              ? h(
                  'td',
                  { 'data-label': 'Max output', class: 'num' },
                  m.max_output ? `${integer(m.max_output)} tokens` : '—',
                )
              : null,
          ),
        ),
      ),
    ),
  );
}

/** GET /v1/models, grouped by category in the API's own order. */
export async function modelsView(ctx: ViewContext): Promise<void> {
  ctx.heading(
    'Models',
    'Pass the model id as ',
    h('code', null, 'model'),
    ' to /v1/tasks (media), to the LLM endpoints or to /v1/embeddings.',
  );
  // Deployment health is extra information: the page still shows the catalog without it.
  const [models, routing] = await Promise.all([
    catalog(),
    data<{ models: Routing }>('GET', '/v1/routing')
      .then((r) => r.models)
      .catch(() => ({}) as Routing),
  ]);
  const groups = new Map<Category, Model[]>();
  for (const model of models) groups.set(model.category, [...(groups.get(model.category) ?? []), model]);
  if (!groups.size) ctx.main.append(h('p', { class: 'card' }, 'The catalog is empty.'));
  for (const [category, list] of groups) {
    const titleId = `models-${category}`;
    ctx.main.append(
      h(
        'section',
        { class: 'card', 'aria-labelledby': titleId },
        h('h2', { id: titleId }, `${TITLES[category]} `, h('span', { class: 'muted' }, `(${list.length})`)),
        table(category, list, routing),
      ),
    );
  }
}
