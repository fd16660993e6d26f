import { describe, expect, test } from 'bun:test';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import fc from 'fast-check';
import { hostname } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/config-error.ts';
import { settlementRow } from '../helpers/settlement-row.ts';
import type { SettlementRow } from '../../src/llm/llm-settlement.repository.ts';
import { SettlementJournal } from '../../src/llm/settlement-journal.ts';
import { SettledWaits } from '../../src/llm/settled-waits.ts';
import { loadEnv } from '../../src/config/env.ts';

const row = (id: string) => settlementRow({ id });

/** Appends an entry of `rows` journaled at `at`: what the usage recorder writes. */
const append = (journal: SettlementJournal, at: string, rows: SettlementRow[]) =>
  journal.append(at, JSON.stringify(rows), rows.length);

/** A fresh journal, its left-over calls settled (none): ready for appends. */
function ready(dir: string, slot = 0, segmentBytes?: number) {
  const journal = SettlementJournal.open(dir, slot, segmentBytes);
  journal.reset();
  return journal;
}

const ats = (journal: SettlementJournal) => journal.leftOver.map((e) => e.at);

describe('SettlementJournal', () => {
  test('what one process appended, the next process of the slot reads back, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const first = ready(dir, 3);
    await append(first, 'a', [row('t1'), row('t2')]);
    await append(first, 'b', [row('t3')]);
    // No close: the process died. The next one of slot 3 finds both lines.
    const next = SettlementJournal.open(dir, 3);
    expect(next.leftOver.map((e) => [e.at, e.rows.map((r) => r.id)])).toEqual([
      ['a', ['t1', 't2']],
      ['b', ['t3']],
    ]);
    expect(next.leftOver[0]?.rows[0]?.input).toEqual(row('t1').input);
    expect(next.unreadable).toBe(0);
    // Another slot has files of its own.
    expect(SettlementJournal.open(dir, 4).leftOver).toEqual([]);
  });

  test('appending before the left-over calls are settled is refused', async () => {
    const journal = SettlementJournal.open(mkdtempSync(join(tmpdir(), 'journal-')), 0);
    await expect(append(journal, 'a', [row('t1')])).rejects.toThrow('before its left-over calls were settled');
  });

  test('a torn last write (never synced, never answered) is not read back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const first = ready(dir);
    await append(first, 'a', [row('t1')]);
    const path = join(dir, 'settlements-0.log');
    const end = readFileSync(path).indexOf(0);
    const fd = openSync(path, 'r+');
    const torn = Buffer.from('{"g":1,"at":"b","rows":[{"id":"t2","acc');
    writeSync(fd, torn, 0, torn.length, end);
    closeSync(fd);
    const next = SettlementJournal.open(dir, 0);
    expect(ats(next)).toEqual(['a']);
    expect(next.unreadable).toBe(0);
  });

  test('a damaged line between readable ones is counted and the file copied aside; the lines around it are read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const line = (at: string) => `${JSON.stringify({ g: 4, at, rows: [row(at)] })}\n`;
    const text = `${line('a')}{not json\n${line('c')}`;
    writeFileSync(join(dir, 'settlements-0.log'), text);
    const journal = SettlementJournal.open(dir, 0);
    expect(ats(journal)).toEqual(['a', 'c']);
    expect(journal.unreadable).toBe(1);
    expect(journal.damagedCopies).toHaveLength(1);
    expect(readFileSync(journal.damagedCopies[0] as string, 'utf8')).toBe(text);
  });

  test('a file of the first format (lines without a generation) is read back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const line = (at: string) => `${JSON.stringify({ at, rows: [row(at)] })}\n`;
    writeFileSync(join(dir, 'settlements-0.log'), `${line('a')}${line('b')}`);
    expect(ats(SettlementJournal.open(dir, 0))).toEqual(['a', 'b']);
  });

  test('past its size, appends move to the other segment only once every call there is settled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const journal = ready(dir, 0, 4_000);
    const big = (at: string) => [row(at.padEnd(3_000, 'x'))];
    expect(await append(journal, 'a', big('a'))).toBe(0);
    // Segment 0 is past 4,000 bytes; segment 1 has nothing unsettled: the append moves there.
    expect(await append(journal, 'b', big('b'))).toBe(1);
    // Segment 1 is full too, but segment 0's call is not settled: it stays in segment 1.
    expect(await append(journal, 'c', big('c'))).toBe(1);
    expect(statSync(join(dir, 'settlements-0.log')).size).toBe(1024 * 1024);
    journal.settled(0);
    // Segment 0's call settled: it is reused from its start, under a higher generation.
    expect(await append(journal, 'd', [row('d')])).toBe(0);
    // Killed here: the unsettled calls (b, c, d) are read back; a, settled and partly overwritten, is not.
    const next = SettlementJournal.open(dir, 0);
    expect(ats(next)).toEqual(['b', 'c', 'd']);
    expect(next.unreadable).toBe(0);
  });

  test('a segment left behind is marked empty once its calls are settled, so a restart does not replay it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const journal = ready(dir, 0, 4_000);
    const big = (at: string) => [row(at.padEnd(3_000, 'x'))];
    await append(journal, 'a', big('a'));
    expect(await append(journal, 'b', big('b'))).toBe(1);
    expect(ats(SettlementJournal.open(dir, 0))).toEqual(['a', 'b']);
    journal.settled(0);
    expect(ats(SettlementJournal.open(dir, 0))).toEqual(['b']);
    // Left with its calls settled already: marked at the move.
    journal.settled(1);
    expect(await append(journal, 'c', big('c'))).toBe(0);
    expect(ats(SettlementJournal.open(dir, 0))).toEqual(['c']);
  });

  test('after keepAll nothing is reused or emptied: a record may be only there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const journal = ready(dir, 0, 4_000);
    const big = (at: string) => [row(at.padEnd(3_000, 'x'))];
    await append(journal, 'a', big('a'));
    await append(journal, 'b', big('b'));
    journal.keepAll();
    journal.settled(0);
    expect(await append(journal, 'c', big('c'))).toBe(1);
    journal.close(true);
    expect(ats(SettlementJournal.open(dir, 0))).toEqual(['a', 'b', 'c']);
  });

  test('close(true) empties both segments; close(false) keeps them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const kept = ready(dir);
    await append(kept, 'a', [row('a')]);
    kept.close(false);
    const next = SettlementJournal.open(dir, 0);
    expect(ats(next)).toEqual(['a']);
    next.reset();
    await append(next, 'b', [row('b')]);
    next.close(true);
    expect(statSync(join(dir, 'settlements-0.log')).size).toBe(0);
    expect(statSync(join(dir, 'settlements-0.1.log')).size).toBe(0);
    expect(SettlementJournal.open(dir, 0).leftOver).toEqual([]);
  });

  test('property: whatever the appends, settlements and segment size, a restart reads back every unsettled call once and in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 500, max: 6_000 }),
        fc.array(
          fc.record({ size: fc.integer({ min: 0, max: 2_500 }), settle: fc.array(fc.nat(), { maxLength: 3 }) }),
          {
            minLength: 1,
            maxLength: 25,
          },
        ),
        async (segmentBytes, steps) => {
          const dir = mkdtempSync(join(tmpdir(), 'journal-prop-'));
          const journal = ready(dir, 0, segmentBytes);
          const unsettled: { at: string; segment: number }[] = [];
          for (const [i, step] of steps.entries()) {
            const at = String(i);
            unsettled.push({ at, segment: await append(journal, at, [row(at.padEnd(step.size, 'x'))]) });
            // Settle some calls, any of those still open, in any order.
            for (const pick of step.settle) {
              if (!unsettled.length) break;
              const [done] = unsettled.splice(pick % unsettled.length, 1);
              if (done) journal.settled(done.segment);
            }
          }
          const read = ats(SettlementJournal.open(dir, 0));
          expect(new Set(read).size).toBe(read.length);
          for (const { at } of unsettled) expect(read).toContain(at);
          expect(read).toEqual([...read].sort((a, b) => Number(a) - Number(b)));
        },
      ),
      { numRuns: 60 },
    );
  });

  test('a slot held by a live process is refused; a dead holder’s lock is taken over', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const sleeper = Bun.spawn(['sleep', '30']);
    try {
      writeFileSync(join(dir, 'settlements-0.lock'), String(sleeper.pid));
      expect(() => SettlementJournal.open(dir, 0)).toThrow(ConfigError);
      expect(() => SettlementJournal.open(dir, 0)).toThrow(`in use by process ${sleeper.pid}`);
    } finally {
      sleeper.kill();
    }
    // A pid no process has (beyond the kernel's pid_max).
    writeFileSync(join(dir, 'settlements-0.lock'), '99999999');
    const journal = SettlementJournal.open(dir, 0);
    expect(readFileSync(join(dir, 'settlements-0.lock'), 'utf8')).toBe(`${process.pid}@${hostname()}`);
    journal.close(true);
  });
});

describe('SettledWaits', () => {
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    return { promise, resolve };
  };

  test('a read waits for its own account only, and not at all when nothing is pending', async () => {
    const waits = new SettledWaits();
    expect(waits.settled(1)).toBeUndefined();
    const [a, b, c] = [deferred(), deferred(), deferred()];
    waits.track(1, a.promise);
    waits.track(1, b.promise);
    waits.track(2, c.promise);
    let oneDone = false;
    const one = waits.settled(1)?.then(() => {
      oneDone = true;
    });
    expect(waits.settled(3)).toBeUndefined();
    c.resolve();
    a.resolve();
    await Bun.sleep(0);
    expect(oneDone).toBe(false);
    b.resolve();
    await one;
    expect(oneDone).toBe(true);
    expect(waits.total).toBe(0);
    expect(waits.settled(1)).toBeUndefined();
    await waits.none();
  });

  test('a read waits for what was pending when it came, not for calls answered after it', async () => {
    const waits = new SettledWaits();
    const [before, after] = [deferred(), deferred()];
    waits.track(1, before.promise);
    const read = waits.settled(1);
    waits.track(1, after.promise);
    before.resolve();
    await read;
    expect(waits.total).toBe(1);
    after.resolve();
    await waits.none();
  });
});

describe('SETTLEMENT_JOURNAL', () => {
  const PG = 'postgres://postgres@127.0.0.1:5432/x';
  test('on by default on the embedded default, off with DATABASE_URL; either way when set', () => {
    expect(loadEnv({}).settlementJournal).toBe(true);
    expect(loadEnv({ DATABASE_URL: PG }).settlementJournal).toBe(false);
    expect(loadEnv({ DATABASE_URL: PG, SETTLEMENT_JOURNAL: 'true' }).settlementJournal).toBe(true);
    expect(loadEnv({ SETTLEMENT_JOURNAL: 'false' }).settlementJournal).toBe(false);
    expect(() => loadEnv({ SETTLEMENT_JOURNAL: 'maybe' })).toThrow(/SETTLEMENT_JOURNAL/);
  });
});

describe('JournalLock', () => {
  test('a lock written on another host is refused while fresh and taken once 30 s old', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'settlements-0.lock');
    writeFileSync(path, '4242@some-other-host');
    expect(() => SettlementJournal.open(dir, 0)).toThrow('in use by process 4242 on host some-other-host');
    const old = new Date(Date.now() - 31_000);
    utimesSync(path, old, old);
    const journal = SettlementJournal.open(dir, 0);
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}@${hostname()}`);
    journal.close(true);
    expect(existsSync(path)).toBe(false);
  });

  test('on this host, a live holder is refused until its lock is 30 s old (a reused pid does not block for good)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'settlements-0.lock');
    const sleeper = Bun.spawn(['sleep', '30']);
    try {
      writeFileSync(path, `${sleeper.pid}@${hostname()}`);
      expect(() => SettlementJournal.open(dir, 0)).toThrow(ConfigError);
      const old = new Date(Date.now() - 31_000);
      utimesSync(path, old, old);
      SettlementJournal.open(dir, 0).close(true);
    } finally {
      sleeper.kill();
    }
  });

  test('processes taking one lock at the same moment, free or stale: exactly one gets it', async () => {
    const lockModule = join(import.meta.dir, '../../src/llm/journal-lock.ts');
    for (let round = 0; round < 6; round++) {
      const path = join(mkdtempSync(join(tmpdir(), 'journal-race-')), 'settlements-0.lock');
      if (round % 2 === 1) {
        // A dead host's lock, stale: each racer finds it so, and only one may take it over.
        writeFileSync(path, '4242@a-host-long-gone');
        const old = new Date(Date.now() - 31_000);
        utimesSync(path, old, old);
      }
      const at = Date.now() + 600;
      // Each waits for the same instant, takes the lock, and holds it (lives) a while after.
      const script = `import { JournalLock } from ${JSON.stringify(lockModule)};
        while (Date.now() < ${at}) {}
        try { JournalLock.take(${JSON.stringify(path)}, 'race'); console.log('took'); }
        catch { console.log('refused'); }
        await Bun.sleep(400);`;
      const racers = Array.from({ length: 4 }, () =>
        Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' }),
      );
      const said = await Promise.all(racers.map(async (p) => (await new Response(p.stdout).text()).trim()));
      // Each read "no lock", and each wrote its own: two or more took it.
      expect(said.filter((s) => s === 'took')).toHaveLength(1);
      expect(said.filter((s) => s === 'refused')).toHaveLength(3);
    }
  }, 20_000);

  test('SETTLEMENT_JOURNAL_DIR moves the files; DATA_DIR/journal otherwise', () => {
    expect(loadEnv({ DATA_DIR: '/srv/gw' }).settlementJournalDir).toBe('/srv/gw/journal');
    expect(loadEnv({ DATA_DIR: '/srv/gw', SETTLEMENT_JOURNAL_DIR: '/var/lib/gw-journal' }).settlementJournalDir).toBe(
      '/var/lib/gw-journal',
    );
  });
});
