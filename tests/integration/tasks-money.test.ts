import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { queryDatabase } from '../helpers/services.ts';

/**
 * Creating media tasks and the money around them (docs/api-contract.md, "Tasks", "Errors"
 * decisions): 422s naming the field, 402 without creating anything, no overdraft under a burst
 * of parallel creates, refunds of failed tasks and of unused image ceilings, and Idempotency-Key.
 * In postgres mode the balance and the ledger are also read straight from the database.
 */

async function balance(gw: GatewayProcess, key: string): Promise<number> {
  const res = await api(gw, 'GET', '/v1/account', { key });
  expect(res.status).toBe(200);
  return res.body.data.balance_usd;
}

async function listAll(gw: GatewayProcess, key: string) {
  const res = await api(gw, 'GET', '/v1/tasks?page_size=100', { key });
  expect(res.status).toBe(200);
  return res.body;
}

async function settle(gw: GatewayProcess, key: string, id: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
    expect(res.status).toBe(200);
    if (res.body.data.status !== 'processing' || Date.now() > deadline) return res.body.data;
    await Bun.sleep(50);
  }
}

const post = (gw: GatewayProcess, key: string, body: unknown, headers: Record<string, string> = {}) =>
  api(gw, 'POST', '/v1/tasks', { key, body, headers });

/** Exact cents/USD comparisons on numeric text from Postgres. */
const units = (text: string | number) => Math.round(Number(text) * 1e10);

interface LedgerRow {
  id: number;
  amount_usd: string;
  balance_after_usd: string;
  kind: string;
  task_id: string | null;
}

for (const mode of MODES) {
  describe(`task creation, charges and refunds [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let databaseUrl: string | undefined;

    beforeAll(async () => {
      const env = await mode.env('tasksmoney');
      databaseUrl = env.DATABASE_URL;
      // ALLOW_PRIVATE_URLS deliberately unset: private callback URLs must be refused.
      gw = await startGateway({ ...env, RATE_LIMIT_PER_MINUTE: '100000' });
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
    });

    /** Postgres mode: the stored balance and the account's ledger. */
    async function dbState(userId: number) {
      if (!databaseUrl) return undefined;
      const [account] = await queryDatabase<{ balance_usd: string }>(
        databaseUrl,
        'select balance_usd from accounts where id = $1',
        [userId],
      );
      const ledger = await queryDatabase<LedgerRow>(
        databaseUrl,
        'select id, amount_usd, balance_after_usd, kind, task_id from ledger_entries where account_id = $1 order by id',
        [userId],
      );
      const tasks = await queryDatabase<{ id: string; status: string; cost_usd: string }>(
        databaseUrl,
        'select id, status, cost_usd from tasks where account_id = $1',
        [userId],
      );
      return { balance: units(account!.balance_usd), ledger, tasks };
    }

    /** The balance always equals the ledger's sum, and every balance_after is the running sum. */
    async function expectLedgerConsistent(userId: number) {
      const state = await dbState(userId);
      if (!state) return;
      const sum = state.ledger.reduce((n, row) => n + units(row.amount_usd), 0);
      expect(sum).toBe(state.balance);
      let running = 0;
      for (const row of state.ledger) {
        running += units(row.amount_usd);
        expect({ id: row.id, after: units(row.balance_after_usd) }).toEqual({ id: row.id, after: running });
      }
    }

    test('invalid requests are 422 envelopes naming the field, and create nothing', async () => {
      const { userId, key } = await createAccount(gw, uniqueEmail('invalid'), 5);
      const cases: Array<[string, unknown, string]> = [
        ['missing model', { input: { prompt: 'x' } }, 'model'],
        ['empty model', { model: '', input: { prompt: 'x' } }, 'model'],
        ['input not an object', { model: 'sandbox/image', input: 'draw a cat' }, 'input'],
        ['input an array', { model: 'sandbox/image', input: ['x'] }, 'input'],
        ['input missing', { model: 'sandbox/image' }, 'input'],
        ['input.prompt missing', { model: 'sandbox/image', input: {} }, 'input.prompt'],
        ['width 10', { model: 'sandbox/image', input: { prompt: 'x', width: 10 } }, 'input.width'],
        ['height 4096', { model: 'sandbox/image', input: { prompt: 'x', height: 4096 } }, 'input.height'],
        [
          'max_sequential_images 0',
          { model: 'sandbox/image', input: { prompt: 'x', max_sequential_images: 0 } },
          'input.max_sequential_images',
        ],
        ['duration 7', { model: 'sandbox/video', input: { prompt: 'x', duration: 7 } }, 'input.duration'],
        ['resolution 4k', { model: 'sandbox/video', input: { prompt: 'x', resolution: '4k' } }, 'input.resolution'],
        ['speech text missing', { model: 'sandbox/speech', input: { voice_id: 'a' } }, 'input.text'],
        ['delay_ms too long', { model: 'sandbox/speech', input: { text: 'x', delay_ms: 60_001 } }, 'input.delay_ms'],
        ['fail not boolean', { model: 'sandbox/speech', input: { text: 'x', fail: 'yes' } }, 'input.fail'],
        ['callback ftp', { model: 'sandbox/image', input: { prompt: 'x' }, callback_url: 'ftp://x' }, 'callback_url'],
        [
          'callback not a url',
          { model: 'sandbox/image', input: { prompt: 'x' }, callback_url: 'not a url' },
          'callback_url',
        ],
        [
          'callback without host',
          { model: 'sandbox/image', input: { prompt: 'x' }, callback_url: 'http://' },
          'callback_url',
        ],
        [
          'callback of 100,000 characters',
          {
            model: 'sandbox/image',
            input: { prompt: 'x' },
            callback_url: `https://example.com/${'a'.repeat(100_000)}`,
          },
          'callback_url: must be at most 2048 characters',
        ],
        [
          'callback relative',
          { model: 'sandbox/image', input: { prompt: 'x' }, callback_url: '/hook' },
          'callback_url',
        ],
        [
          'callback loopback',
          { model: 'sandbox/image', input: { prompt: 'x' }, callback_url: 'http://127.0.0.1/hook' },
          'callback_url',
        ],
        [
          'callback private',
          { model: 'sandbox/image', input: { prompt: 'x' }, callback_url: 'http://10.0.0.1/' },
          'callback_url',
        ],
        [
          'callback localhost',
          { model: 'sandbox/image', input: { prompt: 'x' }, callback_url: 'http://localhost:9/' },
          'callback_url',
        ],
        ['dry_run not boolean', { model: 'sandbox/image', input: { prompt: 'x' }, dry_run: 'yes' }, 'dry_run'],
        ['LLM model', { model: 'sandbox/echo', input: { prompt: 'x' } }, 'model'],
        ['unknown model', { model: 'sandbox/nothing', input: { prompt: 'x' } }, 'model'],
        ['unknown provider', { model: 'acme/thing', input: { prompt: 'x' } }, 'model'],
      ];
      // Every case is tried before comparing, so one report lists every wrong answer.
      const seen = [];
      for (const [name, body, field] of cases) {
        const res = await post(gw, key, body);
        seen.push({
          name,
          status: res.status,
          envelope: res.body?.success === false && res.body?.code === res.status,
          names_field: String(res.body?.data?.message).includes(field),
        });
      }
      expect(seen).toEqual(cases.map(([name]) => ({ name, status: 422, envelope: true, names_field: true })));
      // The same on the legacy route, where callback_url sits beside the fields.
      for (const callback_url of ['not a url', 'ftp://x', 'http://127.0.0.1/hook']) {
        const res = await api(gw, 'POST', '/sandbox-image/generate', { key, body: { prompt: 'x', callback_url } });
        expect({ callback_url, status: res.status, message: res.body?.data?.message }).toEqual({
          callback_url,
          status: 422,
          message: expect.stringContaining('callback_url'),
        });
      }
      for (const raw of ['{"model": "sandbox/image", "input": {', 'not json', '']) {
        const res = await api(gw, 'POST', '/v1/tasks', { key, rawBody: raw });
        expect({ raw, status: res.status }).toEqual({ raw, status: 422 });
        expect(res.body).toMatchObject({ success: false, code: 422, data: { message: expect.any(String) } });
      }
      // Dry runs are validated the same way.
      const dry = await post(gw, key, { model: 'sandbox/video', input: { prompt: 'x', duration: 7 }, dry_run: true });
      expect(dry.status).toBe(422);
      expect(dry.body.data.message).toContain('input.duration');
      // Valid bodies on the same account still work, so the 422s were about the fields.
      expect(
        (
          await post(gw, key, {
            model: 'sandbox/image',
            input: { prompt: 'x' },
            callback_url: 'https://example.com/hook',
            dry_run: true,
          })
        ).status,
      ).toBe(200);

      expect(await balance(gw, key)).toBe(5);
      expect((await listAll(gw, key)).pagination.total).toBe(0);
      const state = await dbState(userId);
      if (state) {
        expect(state.tasks).toEqual([]);
        expect(state.ledger.map((r) => r.kind)).toEqual(['topup']);
      }
    });

    test('a balance too low is 402 `insufficient balance`; nothing is created or charged', async () => {
      const { userId, key } = await createAccount(gw, uniqueEmail('poor'), 0.1);
      const cases = [
        { model: 'sandbox/video', input: { prompt: 'x', duration: 5 } }, // $0.25
        { model: 'sandbox/image', input: { prompt: 'x', max_sequential_images: 11 } }, // ceiling $0.11
        { model: 'sandbox/speech', input: { text: 'x'.repeat(1001) } }, // $0.1001
      ];
      for (const body of cases) {
        const res = await post(gw, key, body);
        expect(res.status).toBe(402);
        expect(res.body).toEqual({ success: false, code: 402, data: { message: 'insufficient balance' } });
      }
      const legacy = await api(gw, 'POST', '/sandbox-video/generate', { key, body: { prompt: 'x', duration: 10 } });
      expect(legacy.status).toBe(402);
      // Exactly the balance is enough.
      const exact = await post(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'x', max_sequential_images: 10, delay_ms: 5000 },
      });
      expect(exact.status).toBe(200);
      expect(await balance(gw, key)).toBe(0);
      const list = await listAll(gw, key);
      expect(list.pagination.total).toBe(1);
      expect(list.data[0].task_id).toBe(exact.body.data.task_id);
      const state = await dbState(userId);
      if (state) {
        expect(state.tasks).toHaveLength(1);
        expect(state.ledger.map((r) => r.kind)).toEqual(['topup', 'charge']);
        expect(state.balance).toBe(0);
      }
      await expectLedgerConsistent(userId);
    });

    test('80 parallel creates against a balance for exactly 20: 20 created, 60 × 402, balance exactly 0', async () => {
      const K = 20;
      const { userId, key } = await createAccount(gw, uniqueEmail('burst'), 0.2);
      const results = await Promise.all(
        Array.from({ length: 4 * K }, (_, i) =>
          post(gw, key, { model: 'sandbox/image', input: { prompt: `burst ${i}`, delay_ms: 200 } }),
        ),
      );
      const created = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 402);
      expect(created).toHaveLength(K);
      expect(refused).toHaveLength(3 * K);
      for (const r of refused)
        expect(r.body).toEqual({ success: false, code: 402, data: { message: 'insufficient balance' } });
      const ids = created.map((r) => r.body.data.task_id as string);
      expect(new Set(ids).size).toBe(K);
      expect(await balance(gw, key)).toBe(0);

      const list = await listAll(gw, key);
      expect(list.pagination.total).toBe(K);
      expect(new Set(list.data.map((t: any) => t.task_id))).toEqual(new Set(ids));
      // Every task runs to completion and keeps its $0.01 (one image, nothing to refund).
      for (const id of ids) {
        const task = await settle(gw, key, id);
        expect(task.status).toBe('completed');
        expect(task.cost).toBeCloseTo(0.01, 10);
      }
      expect(await balance(gw, key)).toBe(0);

      const state = await dbState(userId);
      if (state) {
        expect(state.balance).toBe(0);
        expect(state.tasks).toHaveLength(K);
        expect(new Set(state.tasks.map((t) => t.id))).toEqual(new Set(ids));
        const charges = state.ledger.filter((r) => r.kind === 'charge');
        expect(charges).toHaveLength(K);
        expect(new Set(charges.map((r) => r.task_id))).toEqual(new Set(ids));
        for (const c of charges) expect(units(c.amount_usd)).toBe(-units(0.01));
        expect(state.ledger.filter((r) => r.kind === 'refund')).toEqual([]);
      }
      await expectLedgerConsistent(userId);
    }, 60_000);

    test('a failed task is refunded in full; its cost reads 0 and the ledger keeps charge and refund', async () => {
      const { userId, key } = await createAccount(gw, uniqueEmail('fail'), 1);
      const res = await post(gw, key, {
        model: 'sandbox/video',
        input: { prompt: 'x', duration: 5, fail: true, delay_ms: 1000 },
      });
      expect(res.status).toBe(200);
      const id = res.body.data.task_id;
      // Charged at creation.
      expect(await balance(gw, key)).toBeCloseTo(0.75, 10);
      const processing = (await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data;
      expect(processing.status).toBe('processing');
      expect(processing.cost).toBeCloseTo(0.25, 10);

      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'failed', error_message: 'sandbox: simulated failure', cost: 0 });
      expect(await balance(gw, key)).toBe(1);
      const state = await dbState(userId);
      if (state) {
        const mine = state.ledger.filter((r) => r.task_id === id);
        expect(mine.map((r) => [r.kind, units(r.amount_usd)])).toEqual([
          ['charge', -units(0.25)],
          ['refund', units(0.25)],
        ]);
        expect(state.balance).toBe(units(1));
        expect(units(state.tasks.find((t) => t.id === id)!.cost_usd)).toBe(0);
      }
      await expectLedgerConsistent(userId);
    });

    test('max_sequential_images 5: the ceiling 0.05 is charged, 0.02 refunded for the 3 images made', async () => {
      const { userId, key } = await createAccount(gw, uniqueEmail('ceiling'), 1);
      const res = await post(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'x', max_sequential_images: 5, delay_ms: 1000 },
      });
      expect(res.status).toBe(200);
      const id = res.body.data.task_id;
      expect(await balance(gw, key)).toBeCloseTo(0.95, 10);
      const task = await settle(gw, key, id);
      expect(task.status).toBe('completed');
      expect(task.output.image_urls).toHaveLength(3);
      expect(task.cost).toBeCloseTo(0.03, 10);
      expect(await balance(gw, key)).toBeCloseTo(0.97, 10);
      const state = await dbState(userId);
      if (state) {
        const mine = state.ledger.filter((r) => r.task_id === id);
        expect(mine.map((r) => [r.kind, units(r.amount_usd)])).toEqual([
          ['charge', -units(0.05)],
          ['refund', units(0.02)],
        ]);
        expect(state.balance).toBe(units(0.97));
      }
      // A ceiling of 1 or 2 needs no refund when 1 image is made for 1, and refunds 0.01 for 2.
      const two = await post(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'y', max_sequential_images: 2, delay_ms: 0 },
      });
      const twoDone = await settle(gw, key, two.body.data.task_id);
      expect(twoDone.cost).toBeCloseTo(0.01, 10);
      expect(twoDone.output).toEqual({ image_url: expect.any(String) });
      expect(await balance(gw, key)).toBeCloseTo(0.96, 10);
      await expectLedgerConsistent(userId);
    });

    describe('Idempotency-Key', () => {
      test('the same key and body twice → one task, charged once; another body → 422; other keys → other tasks', async () => {
        const { userId, key } = await createAccount(gw, uniqueEmail('idem'), 1);
        const body = { model: 'sandbox/image', input: { prompt: 'same', delay_ms: 0 } };
        const first = await post(gw, key, body, { 'idempotency-key': 'key-one' });
        const second = await post(gw, key, body, { 'idempotency-key': 'key-one' });
        expect(first.status).toBe(200);
        expect(second.status).toBe(200);
        // A replay answers the task as it is now (its whole record), never a second task.
        expect(second.body).toMatchObject({
          success: true,
          code: 200,
          data: { task_id: first.body.data.task_id, model: 'sandbox/image' },
        });
        expect(['processing', 'completed']).toContain(second.body.data.status);
        // Key order inside the body does not matter.
        const reordered = await post(
          gw,
          key,
          { input: { delay_ms: 0, prompt: 'same' }, model: 'sandbox/image' },
          { 'idempotency-key': 'key-one' },
        );
        expect(reordered.body.data?.task_id).toBe(first.body.data.task_id);
        expect(await balance(gw, key)).toBeCloseTo(0.99, 10);

        const conflict = await post(
          gw,
          key,
          { model: 'sandbox/image', input: { prompt: 'different', delay_ms: 0 } },
          { 'idempotency-key': 'key-one' },
        );
        expect(conflict.status).toBe(422);
        expect(conflict.body).toMatchObject({ success: false, code: 422 });
        expect(conflict.body.data.message).toContain('Idempotency-Key');
        const otherCallback = await post(
          gw,
          key,
          { ...body, callback_url: 'https://example.com/hook' },
          { 'idempotency-key': 'key-one' },
        );
        expect(otherCallback.status).toBe(422);

        const a = await post(gw, key, body, { 'idempotency-key': 'key-two' });
        const b = await post(gw, key, body, { 'idempotency-key': 'key-three' });
        const none = await post(gw, key, body);
        const ids = [first, a, b, none].map((r) => r.body.data.task_id);
        expect(new Set(ids).size).toBe(4);
        expect(await balance(gw, key)).toBeCloseTo(0.96, 10);

        // The finished task is still what the key names.
        await settle(gw, key, first.body.data.task_id);
        const after = await post(gw, key, body, { 'idempotency-key': 'key-one' });
        expect(after.body.data.task_id).toBe(first.body.data.task_id);
        expect((await listAll(gw, key)).pagination.total).toBe(4);
        const state = await dbState(userId);
        if (state)
          expect(state.ledger.filter((r) => r.task_id === first.body.data.task_id && r.kind === 'charge')).toHaveLength(
            1,
          );
        await expectLedgerConsistent(userId);
      });

      test('10 parallel requests with one key → one task, charged once', async () => {
        const { userId, key } = await createAccount(gw, uniqueEmail('idem-par'), 1);
        const body = { model: 'sandbox/video', input: { prompt: 'parallel', duration: 5, delay_ms: 0 } };
        const results = await Promise.all(
          Array.from({ length: 10 }, () => post(gw, key, body, { 'idempotency-key': 'parallel-key' })),
        );
        expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
        const ids = new Set(results.map((r) => r.body.data.task_id));
        expect(ids.size).toBe(1);
        // The one that made the task says nothing; the other nine say they repeat it.
        expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
        expect(await balance(gw, key)).toBeCloseTo(0.75, 10);
        expect((await listAll(gw, key)).pagination.total).toBe(1);
        const state = await dbState(userId);
        if (state) {
          expect(state.tasks).toHaveLength(1);
          expect(state.ledger.filter((r) => r.kind === 'charge')).toHaveLength(1);
        }
        await expectLedgerConsistent(userId);
      });

      test('keys belong to one account', async () => {
        const { key: k1 } = await createAccount(gw, uniqueEmail('idem-a'), 1);
        const { key: k2 } = await createAccount(gw, uniqueEmail('idem-b'), 1);
        const body = { model: 'sandbox/speech', input: { text: 'shared key', delay_ms: 0 } };
        const r1 = await post(gw, k1, body, { 'idempotency-key': 'shared' });
        const r2 = await post(gw, k2, body, { 'idempotency-key': 'shared' });
        expect(r1.status).toBe(200);
        expect(r2.status).toBe(200);
        expect(r2.body.data.task_id).not.toBe(r1.body.data.task_id);
        expect((await api(gw, 'GET', `/v1/tasks/${r2.body.data.task_id}`, { key: k2 })).status).toBe(200);
      });

      test('an Idempotency-Key is the account’s: another of its keys replays the task only if the task’s model is its to use', async () => {
        const { key } = await createAccount(gw, uniqueEmail('idem-keys'), 1);
        const made = await api(gw, 'POST', '/v1/keys', { key, body: { name: 'images', models: ['sandbox/image'] } });
        const imagesOnly = made.body.data.key as string;
        const body = { model: 'sandbox/speech', input: { text: 'by the default key', delay_ms: 0 } };
        const first = await post(gw, key, body, { 'idempotency-key': 'per-account' });
        expect(first.status).toBe(200);
        // The images-only key sending the same create was answered the speech task (200).
        const replay = await post(gw, imagesOnly, body, { 'idempotency-key': 'per-account' });
        expect(replay.status).toBe(403);
        expect(replay.body.data.message).toContain('model_not_allowed');
        const own = await api(gw, 'POST', '/v1/keys', { key, body: { name: 'speech', models: ['sandbox/speech'] } });
        const again = await post(gw, own.body.data.key, body, { 'idempotency-key': 'per-account' });
        expect(again.status).toBe(200);
        expect(again.body.data.task_id).toBe(first.body.data.task_id);
      });

      test('a key on the legacy generate route works the same way', async () => {
        const { key } = await createAccount(gw, uniqueEmail('idem-legacy'), 1);
        const first = await api(gw, 'POST', '/sandbox-speech/generate', {
          key,
          body: { text: 'legacy idem', delay_ms: 0 },
          headers: { 'idempotency-key': 'legacy-1' },
        });
        const again = await api(gw, 'POST', '/speech/generate', {
          key,
          body: { text: 'legacy idem', delay_ms: 0 },
          headers: { 'idempotency-key': 'legacy-1' },
        });
        expect(first.status).toBe(200);
        expect(again.status).toBe(200);
        expect(again.body.data.task_id).toBe(first.body.data.task_id);
        const conflict = await api(gw, 'POST', '/sandbox-speech/generate', {
          key,
          body: { text: 'changed', delay_ms: 0 },
          headers: { 'idempotency-key': 'legacy-1' },
        });
        expect(conflict.status).toBe(422);
        expect(conflict.body.data.message).toContain('Idempotency-Key');
        // 'legacy idem' is 11 characters → $0.0011, charged once.
        expect(await balance(gw, key)).toBeCloseTo(0.9989, 10);
        expect((await listAll(gw, key)).pagination.total).toBe(1);
      });

      test('a bad key (empty, longer than 255, not visible ASCII) is 422 and creates nothing', async () => {
        const { key } = await createAccount(gw, uniqueEmail('idem-bad'), 1);
        const body = { model: 'sandbox/image', input: { prompt: 'x', delay_ms: 0 } };
        for (const bad of ['', 'k'.repeat(256), 'has space']) {
          const res = await post(gw, key, body, { 'idempotency-key': bad });
          expect({ len: bad.length, status: res.status }).toEqual({ len: bad.length, status: 422 });
          expect(res.body.data.message).toContain('Idempotency-Key');
        }
        const legacyBad = await api(gw, 'POST', '/sandbox-image/generate', {
          key,
          body: { prompt: 'x' },
          headers: { 'idempotency-key': 'k'.repeat(256) },
        });
        expect(legacyBad.status).toBe(422);
        expect(await balance(gw, key)).toBe(1);
        expect((await listAll(gw, key)).pagination.total).toBe(0);
        // 255 characters is still a good key.
        const longest = await post(gw, key, body, { 'idempotency-key': 'k'.repeat(255) });
        expect(longest.status).toBe(200);
        expect((await post(gw, key, body, { 'idempotency-key': 'k'.repeat(255) })).body.data.task_id).toBe(
          longest.body.data.task_id,
        );
      });
    });

    test('after everything, every account balance equals its ledger sum (postgres)', async () => {
      if (!databaseUrl) return;
      const rows = await queryDatabase<{ id: number; balance_usd: string; ledger: string | null }>(
        databaseUrl,
        'select a.id, a.balance_usd, (select sum(amount_usd) from ledger_entries l where l.account_id = a.id) as ledger from accounts a order by a.id',
      );
      expect(rows.length).toBeGreaterThan(5);
      for (const row of rows)
        expect({ id: row.id, balance: units(row.balance_usd) }).toEqual({
          id: row.id,
          balance: units(row.ledger ?? 0),
        });
      const negative = await queryDatabase(databaseUrl, 'select id from accounts where balance_usd < 0');
      expect(negative).toEqual([]);
    });
  });
}
