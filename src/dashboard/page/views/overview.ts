import { data } from '../api.ts';
import { h } from '../dom.ts';
import { dateTime, isoTime, usd } from '../format.ts';
import { spendChart, spendTable } from '../spend-chart.ts';
import type { Account, SpendBreakdown, SpendDay } from '../types.ts';
import { spendBreakdownSection } from './spend-breakdown.ts';
import type { ViewContext } from '../view.ts';

const DAYS = 30;

const stat = (label: string, value: Node | string, extra?: Node | string) =>
  h(
    'div',
    { class: 'card stat' },
    h('p', { class: 'stat-label' }, label),
    h('p', { class: 'stat-value' }, value),
    extra ? h('p', { class: 'muted small' }, extra) : null,
  );

/** The address with a line-break opportunity after the @, where a narrow card should wrap it. */
function emailText(email: string): HTMLElement {
  const at = email.lastIndexOf('@');
  return at === -1
    ? h('span', { class: 'break' }, email)
    : h('span', { class: 'break' }, email.slice(0, at + 1), h('wbr'), email.slice(at + 1));
}

const when = (unix: number) => h('time', { datetime: isoTime(unix) }, dateTime(unix));

/**
 * Balance, e-mail and dates from GET /v1/account; the spend chart from GET /v1/account/spend; spend
 * per key and per model from GET /v1/account/spend/breakdown.
 */
export async function overviewView(ctx: ViewContext): Promise<void> {
  ctx.heading('Overview');
  const [account, spend, breakdown] = await Promise.all([
    data<Account>('GET', '/v1/account', { signal: ctx.signal }),
    data<SpendDay[]>('GET', `/v1/account/spend?days=${DAYS}`, { signal: ctx.signal }),
    data<SpendBreakdown>('GET', `/v1/account/spend/breakdown?days=${DAYS}`, { signal: ctx.signal }),
  ]);
  ctx.main.append(
    h(
      'section',
      { class: 'stats', 'aria-label': 'Account' },
      stat('Balance', h('span', { 'data-testid': 'balance' }, usd(account.balance_usd))),
      stat('E-mail', emailText(account.email), `User id ${account.user_id}`),
      stat('Account created', when(account.created_at)),
      stat('Last updated', when(account.updated_at)),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'spend-title' },
      h('h2', { id: 'spend-title' }, `Spend per day, last ${DAYS} days`),
      h('p', { class: 'muted small' }, 'Charges minus refunds, by UTC day, split by category.'),
      spendChart(spend),
      h('details', null, h('summary', null, 'Show the numbers as a table'), spendTable(spend)),
    ),
    spendBreakdownSection(breakdown, DAYS),
  );
}
