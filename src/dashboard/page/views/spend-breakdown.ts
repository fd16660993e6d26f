import { h } from '../dom.ts';
import { integer, usd } from '../format.ts';
import type { SpendBreakdown } from '../types.ts';

const table = (label: string, testId: string, head: string, rows: Array<[string, number, number]>) =>
  h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'stack', 'aria-label': label, 'data-testid': testId },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, head),
          h('th', { scope: 'col' }, 'Spend'),
          h('th', { scope: 'col' }, 'Calls'),
        ),
      ),
      h(
        'tbody',
        null,
        rows.length
          ? rows.map(([name, spend, calls]) =>
              h(
                'tr',
                null,
                h('th', { scope: 'row', 'data-label': head }, name),
                h('td', { 'data-label': 'Spend' }, usd(spend)),
                h('td', { 'data-label': 'Calls' }, integer(calls)),
              ),
            )
          : h('tr', null, h('td', { colspan: '3', class: 'muted' }, 'Nothing spent yet.')),
      ),
    ),
  );

/** The overview's spend per API key and per model (GET /v1/account/spend/breakdown). */
export function spendBreakdownSection(breakdown: SpendBreakdown, days: number): HTMLElement {
  const byKey = (breakdown.by_key ?? []).map((k): [string, number, number] => [
    k.name ?? (k.key_id === null ? 'before per-key records' : `key ${k.key_id}`),
    k.spend_usd,
    k.calls,
  ]);
  const byModel = (breakdown.by_model ?? []).map((m): [string, number, number] => [m.model, m.spend_usd, m.calls]);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'breakdown-title' },
    h('h2', { id: 'breakdown-title' }, `Spend per key and per model, last ${days} days`),
    h('p', { class: 'muted small' }, 'Final costs of tasks and LLM calls (refunds taken off).'),
    table('Spend per key', 'spend-by-key', 'Key', byKey),
    table('Spend per model', 'spend-by-model', 'Model', byModel),
  );
}
