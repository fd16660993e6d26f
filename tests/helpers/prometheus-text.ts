/**
 * A parser of the Prometheus text exposition format, for tests: no parser package is installed
 * (prom-client only writes the format), so this reads samples the way a scraper does — comment
 * lines skipped, `name{label="value",…} value [timestamp]`, label values with `\\`, `\"` and `\n`
 * escapes.
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A sample value as the format defines it, by Go's `strconv.ParseFloat`: NaN and the infinities in
 * any case (prom-client writes `Nan`, as it does for a gauge with nothing measured yet).
 * @see https://pkg.go.dev/strconv#ParseFloat
 */
function parseValue(text: string): number {
  const special = text.toLowerCase();
  if (special === 'nan') return Number.NaN;
  if (special === '+inf' || special === 'inf' || special === '+infinity' || special === 'infinity')
    return Number.POSITIVE_INFINITY;
  if (special === '-inf' || special === '-infinity') return Number.NEGATIVE_INFINITY;
  const n = Number(text);
  if (text === '' || Number.isNaN(n)) throw new Error(`not a sample value: ${text}`);
  return n;
}

function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start;
  while (line[i] !== '}') {
    if (line[i] === ',' || line[i] === ' ') {
      i++;
      continue;
    }
    const eq = line.indexOf('=', i);
    if (eq < 0 || line[eq + 1] !== '"') throw new Error(`bad label at ${i}: ${line}`);
    const key = line.slice(i, eq).trim();
    let value = '';
    let j = eq + 2;
    for (; line[j] !== '"'; j++) {
      if (j >= line.length) throw new Error(`unterminated label value: ${line}`);
      if (line[j] === '\\') {
        j++;
        value += line[j] === 'n' ? '\n' : line[j];
      } else value += line[j];
    }
    labels[key] = value;
    i = j + 1;
  }
  return { labels, end: i + 1 };
}

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    let name: string;
    let labels: Record<string, string> = {};
    let rest: string;
    if (brace >= 0 && (space < 0 || brace < space)) {
      name = line.slice(0, brace);
      const parsed = parseLabels(line, brace + 1);
      labels = parsed.labels;
      rest = line.slice(parsed.end).trim();
    } else {
      name = line.slice(0, space);
      rest = line.slice(space + 1).trim();
    }
    samples.push({ name, labels, value: parseValue(rest.split(/\s+/)[0] ?? '') });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include every one of `labels`. */
export function sampleSum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
