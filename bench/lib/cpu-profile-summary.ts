/**
 * A `.cpuprofile` (Chrome's format, what `bun --cpu-prof` writes) summed up as Markdown tables:
 * the functions that were running when sampled (self), the files they are in, and the functions
 * with the most samples under them (inclusive). Shares are of samples, not of the profile's time
 * deltas: a process that waits (on Postgres, on the upstream) between samples would otherwise
 * charge the wait to whatever ran next. JavaScriptCore's sampler names native functions by their
 * JavaScript name (`stringify`, `fetch`) and over-weights them (bench/README.md), so read a
 * native row as "in there or just around it".
 */
import { readFile } from 'node:fs/promises';
import { table } from './wrk.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

/** `file:line` relative to the checkout; native frames have no file. */
function where(node: ProfileNode, root: string): { fn: string; file: string } {
  const url = node.callFrame.url.replace(/^file:\/\//, '');
  const file = url === '' ? '(native)' : url.startsWith(root) ? url.slice(root.length + 1) : url;
  const name = node.callFrame.functionName || '(anonymous)';
  return { fn: url === '' ? name : `${name} ${file}:${node.callFrame.lineNumber + 1}`, file };
}

const ranked = (counts: Map<string, number>, total: number, top: number, label: string) =>
  table(
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, n]) => ({ [label]: key, samples: n, share: `${((100 * n) / total).toFixed(1)} %` })),
  );

export async function summarizeCpuProfile(path: string, root: string, top = 25): Promise<string> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);

  const self = new Map<string, number>();
  const files = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  for (const [id, n] of hits) {
    const node = byId.get(id);
    if (!node) continue;
    const { fn, file } = where(node, root);
    if (fn === '(root)' || fn === '(idle)' || fn === '(program)') continue;
    total += n;
    self.set(fn, (self.get(fn) ?? 0) + n);
    files.set(file, (files.get(file) ?? 0) + n);
    // Each function once per sample, however often it recurses.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at);
      if (!frame) break;
      const name = where(frame, root).fn;
      if (name === '(root)' || seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + n);
    }
  }
  if (total === 0) return 'The profile holds no samples of running code.';
  return [
    `${total} samples of running code.`,
    '',
    'Running when sampled (self):',
    '',
    ranked(self, total, top, 'function'),
    '',
    'By file (self):',
    '',
    ranked(files, total, top, 'file'),
    '',
    'With the most samples under them (inclusive):',
    '',
    ranked(inclusive, total, top, 'function'),
  ].join('\n');
}
