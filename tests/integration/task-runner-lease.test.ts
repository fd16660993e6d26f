import { describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import * as v from 'valibot';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import { Logger } from '../../src/ops/logger.ts';
import type { MediaRegistry, ResolvedMediaModel } from '../../src/tasks/media-registry.ts';
import { TaskRunner } from '../../src/tasks/task-runner.ts';
import type { JobStep } from '../../providers/types.ts';
import { DATABASE_MODES, useDatabase } from '../helpers/in-process-database.ts';
import { insertTaskRow } from '../helpers/task-rows.ts';

/**
 * The task runner against a real database (src/tasks/task-runner.ts): a lease that runs out while
 * the instance's own step still runs (a heartbeat that cannot reach the database; here, a lease
 * shorter than the heartbeat's period) brings the task back to the same instance, which must not
 * start a second step of it: that would submit the job upstream again.
 */
for (const mode of DATABASE_MODES)
  describe(`task runner leases (${mode})`, () => {
    const database = useDatabase(mode, 'runnerlease');

    test('a task whose lease ran out under its own running step is not stepped twice', async () => {
      const { db } = database();
      const { account } = await createAccount(db, { email: `lease-${Date.now()}@example.com`, balance: toUnits(1) });
      let starts = 0;
      const slowStart = async (): Promise<JobStep> => {
        starts++;
        await Bun.sleep(1200);
        return { state: 'running', operation: { id: 'job-1' }, pollAfterMs: 60_000 };
      };
      const model = {
        ref: { id: 'fake/slow', upstreamModel: 'slow' },
        media: {
          schema: v.record(v.string(), v.unknown()),
          price: () => 0.01,
          start: slowStart,
          poll: async (): Promise<JobStep> => ({ state: 'running', operation: { id: 'job-1' }, pollAfterMs: 60_000 }),
        },
      } as unknown as ResolvedMediaModel;
      const registry = { get: (id: string) => (id === 'fake/slow' ? model : undefined) } as unknown as MediaRegistry;
      const taskId = await insertTaskRow(db, { accountId: account.id, model: 'fake/slow', costUsd: 0.01 });
      const runner = new TaskRunner(
        db,
        registry,
        { save: async () => ({ id: '', url: '' }), remove: async () => {} },
        () => {},
        new Logger('silent'),
        {
          instanceId: 'instance-a',
          concurrency: 4,
          // Renewed every 250 ms at the soonest: a 100 ms lease runs out between heartbeats.
          leaseMs: 100,
          idleMs: 50,
        },
      );
      runner.start();
      try {
        await Bun.sleep(1600);
      } finally {
        await runner.stop();
      }
      expect(starts).toBe(1);
      const { rows } = await sql<{ operation: unknown }>`select operation from tasks where id = ${taskId}`.execute(db);
      expect(rows[0]?.operation).toEqual({ id: 'job-1' });
    });
  });
