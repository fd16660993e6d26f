import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import * as v from 'valibot';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import type { AppContext } from '../../src/app/context.ts';
import type { Db } from '../../src/db/database.ts';
import { Logger } from '../../src/ops/logger.ts';
import { FileStore } from '../../src/storage/file-store.ts';
import { LocalStorage } from '../../src/storage/local-storage.ts';
import { MAX_TASK_OUTPUTS } from '../../src/tasks/keep-task-outputs.ts';
import type { MediaRegistry, ResolvedMediaModel } from '../../src/tasks/media-registry.ts';
import { taskOutputStore } from '../../src/tasks/save-task-output.ts';
import { TaskRunner } from '../../src/tasks/task-runner.ts';
import type { JobStep, MediaOutput } from '../../providers/types.ts';
import { DATABASE_MODES, useDatabase } from '../helpers/in-process-database.ts';
import { insertTaskRow } from '../helpers/task-rows.ts';

/**
 * A step's outputs are kept all or none (src/tasks/keep-task-outputs.ts), against a real
 * database and file store: when one output cannot be stored, or the task was finished elsewhere
 * while its outputs were stored, the files already stored are removed; an upstream answering
 * more outputs than the gateway keeps fails the task before anything is downloaded.
 */
const png = (seed: number): MediaOutput => {
  const body = crypto.getRandomValues(new Uint8Array(256));
  body.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, seed]);
  return { kind: 'image', body, contentType: 'image/png' };
};

for (const mode of DATABASE_MODES)
  describe(`task outputs (${mode})`, () => {
    const database = useDatabase(mode, 'taskoutputs');
    let dir: string;
    let upstream: ReturnType<typeof Bun.serve>;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'task-outputs-'));
      upstream = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: (req) =>
          new URL(req.url).pathname === '/gone.png' ? new Response('expired', { status: 404 }) : new Response('?'),
      });
    });
    afterAll(async () => {
      upstream?.stop(true);
      await rm(dir, { recursive: true, force: true });
    });

    /** Runs one task of a model whose job answers `start` at once, until the task leaves `processing`. */
    async function runTask(db: Db, start: (taskId: string) => Promise<JobStep>) {
      const { account } = await createAccount(db, {
        email: `out-${crypto.randomUUID()}@example.com`,
        balance: toUnits(1),
      });
      const model = {
        ref: { id: 'fake/outputs', upstreamModel: 'outputs' },
        media: {
          schema: v.record(v.string(), v.unknown()),
          price: () => 0.01,
          start: (job: { taskId: string }) => start(job.taskId),
        },
      } as unknown as ResolvedMediaModel;
      const registry = { get: (id: string) => (id === 'fake/outputs' ? model : undefined) } as unknown as MediaRegistry;
      const taskId = await insertTaskRow(db, { accountId: account.id, model: 'fake/outputs', costUsd: 0.01 });
      const files = new FileStore(db, new LocalStorage(join(dir, String(account.id))), {
        uploadUrl: 'http://gateway.test',
        maxBytes: 1_000_000,
      });
      const ctx = { env: { allowPrivateUrls: true, maxUploadBytes: 1_000_000 }, files } as unknown as AppContext;
      const runner = new TaskRunner(db, registry, taskOutputStore(ctx), () => {}, new Logger('silent'), {
        instanceId: `outputs-${taskId}`,
        concurrency: 1,
        leaseMs: 15_000,
        idleMs: 20,
      });
      runner.start();
      try {
        for (let i = 0; i < 200; i++) {
          const { rows } = await sql<{ status: string }>`select status from tasks where id = ${taskId}`.execute(db);
          if (rows[0]?.status !== 'processing') break;
          await Bun.sleep(25);
        }
      } finally {
        await runner.stop();
      }
      const task = (
        await sql<{ status: string; error_message: string | null; output: unknown }>`
          select status, error_message, output from tasks where id = ${taskId}`.execute(db)
      ).rows[0];
      const rows = (
        await sql<{ n: string }>`select count(*) as n from stored_files where account_id = ${account.id}`.execute(db)
      ).rows[0];
      const onDisk = await readdir(join(dir, String(account.id)), { recursive: true }).catch(() => []);
      const kept = onDisk.filter((name) => /^[0-9a-z_-]{16,}$/i.test(name.split('/').pop() ?? ''));
      return { task, storedRows: Number(rows?.n), keptFiles: kept.length };
    }

    test('an output that cannot be stored removes the ones stored before it', async () => {
      const { db } = database();
      const result = await runTask(db, async () => ({
        state: 'succeeded',
        outputs: [png(1), png(2), { kind: 'image', url: `http://127.0.0.1:${upstream.port}/gone.png` }],
      }));
      expect(result.task?.status).toBe('failed');
      expect(result.task?.error_message).toContain('output download failed: 404');
      expect(result.storedRows).toBe(0);
      expect(result.keptFiles).toBe(0);
    });

    test('the outputs of a task finished elsewhere while they were stored are removed', async () => {
      const { db } = database();
      const result = await runTask(db, async (taskId) => {
        await sql`update tasks set status = 'cancelled' where id = ${taskId}`.execute(db);
        return { state: 'succeeded', outputs: [png(3), png(4)] };
      });
      expect(result.task?.status).toBe('cancelled');
      expect(result.storedRows).toBe(0);
      expect(result.keptFiles).toBe(0);
    });

    test(`more than ${MAX_TASK_OUTPUTS} outputs fail the task, storing none`, async () => {
      const { db } = database();
      const result = await runTask(db, async () => ({
        state: 'succeeded',
        outputs: Array.from({ length: MAX_TASK_OUTPUTS + 1 }, (_, i) => png(i)),
      }));
      expect(result.task?.status).toBe('failed');
      expect(result.task?.error_message).toContain(`at most ${MAX_TASK_OUTPUTS} are kept`);
      expect(result.storedRows).toBe(0);

      const enough = await runTask(db, async () => ({ state: 'succeeded', outputs: [png(5), png(6)] }));
      expect(enough.task?.status).toBe('completed');
      expect(enough.storedRows).toBe(2);
      expect(enough.keptFiles).toBe(2);
    });
  });
