import { expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Persistence lives in repositories: only `*.repository.ts` files (and `src/db/`, which connects,
 * migrates and pings) build queries. Everything else calls a repository function, so a table's
 * statements can be read, reviewed and benchmarked in one place.
 */
const ROOT = resolve(import.meta.dir, '../..');
const QUERY = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(|\bsql(<[^>]*>)?`/;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

const mayQuery = (file: string) => file.endsWith('.repository.ts') || file.startsWith('src/db/');

test('only repositories and src/db build SQL', () => {
  const outside: string[] = [];
  for (const file of ['src', 'providers', 'translators'].flatMap(sourceFiles)) {
    if (mayQuery(file)) continue;
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (QUERY.test(line)) outside.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(outside).toEqual([]);
});

test('the check sees a query where there is one', () => {
  // Guards the pattern itself: were it to stop matching, the test above would pass on anything.
  for (const line of [
    "db.selectFrom('tasks')",
    'trx.updateTable("accounts")',
    'sql`select 1`',
    'sql<{ id: string }>`update x`',
  ]) {
    expect(QUERY.test(line)).toBe(true);
  }
  expect(QUERY.test("const message = 'selectFrom is a word';")).toBe(false);
});
