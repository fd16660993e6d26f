import { describe, expect, test } from 'bun:test';
import { mkdir, mkdtemp, readdir, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectStorage } from '../../src/storage/connect.ts';
import { LocalStorage, STALE_PART_AGE_MS } from '../../src/storage/local-storage.ts';

async function partsDir(): Promise<{ dataDir: string; root: string; tmp: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-sweep-'));
  const root = join(dataDir, 'files');
  const tmp = join(root, '.tmp');
  await mkdir(tmp, { recursive: true });
  return { dataDir, root, tmp };
}

async function part(dir: string, name: string, ageMs: number): Promise<void> {
  const path = join(dir, name);
  await writeFile(path, 'partial');
  const when = (Date.now() - ageMs) / 1000;
  await utimes(path, when, when);
}

describe('stale partial writes', () => {
  test('.part files older than an hour are swept; younger ones and other files stay', async () => {
    const { root, tmp } = await partsDir();
    await part(tmp, 'old.1.part', STALE_PART_AGE_MS + 60_000);
    await part(tmp, 'older.2.part', 24 * STALE_PART_AGE_MS);
    await part(tmp, 'young.3.part', 60_000);
    await part(tmp, 'not-a-part.txt', 24 * STALE_PART_AGE_MS);
    expect(await new LocalStorage(root).sweepStaleParts()).toBe(2);
    expect((await readdir(tmp)).sort()).toEqual(['not-a-part.txt', 'young.3.part']);
  });

  test('no .tmp directory yet is nothing to sweep', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-sweep-empty-'));
    expect(await new LocalStorage(join(dataDir, 'files')).sweepStaleParts()).toBe(0);
  });

  test('connectStorage sweeps at start', async () => {
    const { dataDir, tmp } = await partsDir();
    await part(tmp, 'crashed.part', 2 * STALE_PART_AGE_MS);
    const swept = await new Promise<number>((resolve, reject) =>
      connectStorage({ dataDir }, (removed, err) => (err ? reject(err) : resolve(removed))),
    );
    expect(swept).toBe(1);
    expect(await readdir(tmp)).toEqual([]);
  });

  test('a put in progress is never swept', async () => {
    const { root, tmp } = await partsDir();
    const storage = new LocalStorage(root);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 1) await gate;
        if (sent++ === 2) return controller.close();
        controller.enqueue(new Uint8Array(10).fill(sent));
      },
    });
    const writing = storage.put('inprogresskey1', body, { contentType: 'text/plain' });
    await Bun.sleep(30);
    expect(await readdir(tmp)).toHaveLength(1);
    expect(await storage.sweepStaleParts()).toBe(0);
    release();
    expect((await writing).size).toBe(20);
  });
});
