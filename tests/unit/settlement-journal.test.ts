import { describe, expect, test } from 'bun:test';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/config-error.ts';
import { settlementRow } from '../helpers/settlement-row.ts';
import { SettlementJournal } from '../../src/llm/settlement-journal.ts';
import { SettledWaits } from '../../src/llm/settled-waits.ts';
import { loadEnv } from '../../src/config/env.ts';

const row = (id: string) => settlementRow({ id });

describe('SettlementJournal', () => {
  test('what one process appended, the next process of the slot reads back, in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const first = SettlementJournal.open(dir, 3);
    await first.append(JSON.stringify({ at: 'a', rows: [row('t1'), row('t2')] }), false);
    await first.append(JSON.stringify({ at: 'b', rows: [row('t3')] }), false);
    // No close: the process died. The next one of slot 3 finds both lines.
    const next = SettlementJournal.open(dir, 3);
    expect(next.leftOver.map((e) => [e.at, e.rows.map((r) => r.id)])).toEqual([
      ['a', ['t1', 't2']],
      ['b', ['t3']],
    ]);
    expect(next.leftOver[0]?.rows[0]?.input).toEqual(row('t1').input);
    expect(next.unreadable).toBe(0);
    // Another slot has a file of its own.
    expect(SettlementJournal.open(dir, 4).leftOver).toEqual([]);
  });

  test('a torn last line (a write that never finished its sync) is cut off, so the next append is a line of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const first = SettlementJournal.open(dir, 0);
    await first.append(JSON.stringify({ at: 'a', rows: [row('t1')] }), false);
    appendFileSync(join(dir, 'settlements-0.log'), '{"at":"b","rows":[{"id":"t2","acc');
    const next = SettlementJournal.open(dir, 0);
    expect(next.leftOver.map((e) => e.at)).toEqual(['a']);
    expect(next.unreadable).toBe(0);
    await next.append(JSON.stringify({ at: 'c', rows: [row('t3')] }), false);
    expect(SettlementJournal.open(dir, 0).leftOver.map((e) => e.at)).toEqual(['a', 'c']);
  });

  test('a damaged line in the middle is counted, not read, and the lines around it are', () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const line = (at: string) => `${JSON.stringify({ at, rows: [row(at)] })}\n`;
    writeFileSync(join(dir, 'settlements-0.log'), `${line('a')}{not json\n${line('c')}`);
    const journal = SettlementJournal.open(dir, 0);
    expect(journal.leftOver.map((e) => e.at)).toEqual(['a', 'c']);
    expect(journal.unreadable).toBe(1);
  });

  test('emptied only when told every entry is settled and the file is large; close(true) empties it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const path = join(dir, 'settlements-0.log');
    const journal = SettlementJournal.open(dir, 0);
    const big = { at: 'x', rows: Array.from({ length: 2_000 }, (_, i) => row(`t${i}`.padEnd(1_000, 'x'))) };
    await journal.append(JSON.stringify(big), false);
    await journal.append(JSON.stringify(big), false);
    const before = statSync(path).size;
    expect(before).toBeGreaterThan(4 * 1024 * 1024);
    await journal.append(JSON.stringify({ at: 'y', rows: [row('small')] }), false);
    expect(statSync(path).size).toBeGreaterThan(before);
    await journal.append(JSON.stringify({ at: 'z', rows: [row('after')] }), true);
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify({ at: 'z', rows: [row('after')] })}\n`);
    journal.close(true);
    expect(statSync(path).size).toBe(0);
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

  test('SETTLEMENT_JOURNAL_DIR moves the files; DATA_DIR/journal otherwise', () => {
    expect(loadEnv({ DATA_DIR: '/srv/gw' }).settlementJournalDir).toBe('/srv/gw/journal');
    expect(loadEnv({ DATA_DIR: '/srv/gw', SETTLEMENT_JOURNAL_DIR: '/var/lib/gw-journal' }).settlementJournalDir).toBe(
      '/var/lib/gw-journal',
    );
  });
});
