import { expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Dependencies point one way — translators/ ← providers/ ← src/ — and no module imports itself
 * back through others. Read from the sources with Bun's own import scanner.
 */
const ROOT = resolve(import.meta.dir, '../..');
const LAYERS = ['translators', 'providers', 'src'] as const;
const transpiler = new Bun.Transpiler({ loader: 'ts' });

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Each source file's relative imports (types included), as repository paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of LAYERS.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    // scanImports drops type-only imports; the regex keeps them, since a type cycle is a cycle too.
    const specifiers = new Set([
      ...transpiler.scanImports(text).map((i) => i.path),
      ...[...text.matchAll(/\bfrom\s+'(\.[^']+)'/g)].map((m) => m[1] as string),
    ]);
    graph.set(
      file,
      [...specifiers].filter((s) => s.startsWith('.')).map((s) => relative(ROOT, resolve(ROOT, dirname(file), s))),
    );
  }
  return graph;
}

const layerOf = (file: string) => LAYERS.findIndex((layer) => file.startsWith(`${layer}/`));

test('translators/ imports nothing from providers/ or src/, and providers/ nothing from src/', () => {
  const reverse: string[] = [];
  for (const [file, imports] of importGraph()) {
    for (const target of imports) if (layerOf(target) > layerOf(file)) reverse.push(`${file} → ${target}`);
  }
  expect(reverse).toEqual([]);
});

test('no import cycle among the sources', () => {
  const graph = importGraph();
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  expect(cycles).toEqual([]);
});
