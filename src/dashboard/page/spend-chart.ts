import { h, s } from './dom.ts';
import { shortDay, usd } from './format.ts';
import type { SpendDay } from './types.ts';

const SERIES = [
  { key: 'llm', label: 'LLM' },
  { key: 'embedding', label: 'Embedding' },
  { key: 'image', label: 'Image' },
  { key: 'video', label: 'Video' },
  { key: 'audio', label: 'Audio' },
] as const;

const HEIGHT = 240;
const MARGIN = { top: 12, right: 24, bottom: 28, left: 64 };

const total = (d: SpendDay) => d.llm + d.embedding + d.image + d.video + d.audio;

/** A round axis maximum (1, 2, 2.5 or 5 × 10^n) at or above `max`, and its tick step. */
function niceScale(max: number, ticks = 4): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: 0.25 };
  const raw = max / ticks;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  return { top: step * Math.ceil(max / step), step };
}

/**
 * Stacked bars of spend per day and category, drawn as inline SVG at the container's own width
 * (redrawn on resize, so labels keep their size on a phone instead of shrinking with a viewBox).
 * Each segment has a <title> (hover, and screen readers); the figure is summarised in its label,
 * and the same numbers are available as a table beside it.
 */
export function spendChart(days: SpendDay[]): HTMLElement {
  const sum = days.reduce((acc, d) => acc + total(d), 0);
  const busiest = days.reduce<SpendDay | undefined>(
    (best, d) => (!best || total(d) > total(best) ? d : best),
    undefined,
  );
  const summary =
    sum > 0 && busiest
      ? `Spend per day over the last ${days.length} days: ${usd(sum)} in total; the highest day was ${shortDay(busiest.day)} with ${usd(total(busiest))}.`
      : `No spend in the last ${days.length} days.`;
  const figure = h('figure', { class: 'chart' });
  const canvas = h('div', { class: 'chart-canvas' });
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': 'Categories' },
    SERIES.map((serie) => {
      const subtotal = days.reduce((acc, d) => acc + d[serie.key], 0);
      return h(
        'li',
        null,
        h('span', { class: `swatch series-${serie.key}`, 'aria-hidden': 'true' }),
        `${serie.label} `,
        h('span', { class: 'muted' }, usd(subtotal)),
      );
    }),
  );
  figure.append(canvas, h('figcaption', null, legend));

  let drawnWidth = 0;
  const draw = () => {
    const width = Math.max(280, Math.floor(canvas.clientWidth || 640));
    if (width === drawnWidth) return;
    drawnWidth = width;
    canvas.replaceChildren(render(days, width, summary, sum === 0));
  };
  new ResizeObserver(draw).observe(canvas);
  requestAnimationFrame(draw);
  return figure;
}

function render(days: SpendDay[], width: number, summary: string, empty: boolean): SVGSVGElement {
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const { top, step } = niceScale(Math.max(...days.map(total), 0));
  const y = (value: number) => MARGIN.top + plotH - (value / top) * plotH;
  const slot = plotW / days.length;
  const barW = Math.max(2, slot * 0.72);
  // Enough room for "Jan 12" under every n-th bar.
  const labelEvery = Math.max(1, Math.ceil(52 / slot));

  const grid = [];
  for (let value = 0; value <= top + step / 2; value += step) {
    grid.push(
      s('line', { class: 'grid', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(value), y2: y(value) }),
      s('text', { class: 'axis-label', x: MARGIN.left - 6, y: y(value) + 4, 'text-anchor': 'end' }, usd(value)),
    );
  }

  const bars = days.map((day, i) => {
    const x = MARGIN.left + i * slot + (slot - barW) / 2;
    let base = 0;
    const segments = SERIES.filter((serie) => day[serie.key] > 0).map((serie) => {
      const value = day[serie.key];
      const rect = s(
        'rect',
        {
          class: `series-${serie.key}`,
          x,
          width: barW,
          y: y(base + value),
          height: Math.max(1, y(base) - y(base + value)),
        },
        s('title', null, `${shortDay(day.day)} · ${serie.label}: ${usd(value)}`),
      );
      base += value;
      return rect;
    });
    const label =
      i % labelEvery === (days.length - 1) % labelEvery
        ? s('text', { class: 'axis-label', x: x + barW / 2, y: HEIGHT - 8, 'text-anchor': 'middle' }, shortDay(day.day))
        : null;
    return s('g', null, segments, label);
  });

  return s(
    'svg',
    { width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img', 'aria-label': summary },
    grid,
    s('line', { class: 'axis', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(0), y2: y(0) }),
    bars,
    empty
      ? s(
          'text',
          { class: 'empty-label', x: MARGIN.left + plotW / 2, y: MARGIN.top + plotH / 2, 'text-anchor': 'middle' },
          'No spend yet',
        )
      : null,
  );
}

/** The chart's numbers as a table, for anyone who prefers reading them (or cannot see the chart). */
export function spendTable(days: SpendDay[]): HTMLElement {
  const rows = days.filter((d) => total(d) !== 0).reverse();
  if (!rows.length) return h('p', { class: 'muted' }, 'Nothing spent in this period.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      null,
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, 'Day (UTC)'),
          SERIES.map((serie) => h('th', { scope: 'col', class: 'num' }, serie.label)),
          h('th', { scope: 'col', class: 'num' }, 'Total'),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((d) =>
          h(
            'tr',
            null,
            h('th', { scope: 'row' }, d.day),
            SERIES.map((serie) => h('td', { class: 'num' }, usd(d[serie.key]))),
            h('td', { class: 'num' }, usd(total(d))),
          ),
        ),
      ),
    ),
  );
}
