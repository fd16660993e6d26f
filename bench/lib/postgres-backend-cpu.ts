/**
 * CPU seconds of the Postgres server processes serving `databaseUrl`'s database (by pid, from
 * pg_stat_activity; they are this machine's processes), so a Postgres-mode figure can include its
 * database as the embedded default's does (PGlite runs inside the gateway).
 */
import pg from 'pg';
import { cpuSeconds } from './proc-cpu.ts';

export async function backendCpu(databaseUrl: string): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, cpuSeconds(pid));
      } catch {
        // exited meanwhile
      }
    }
    return cpu;
  } finally {
    await client.end();
  }
}

/**
 * What the backends alive at the end used since `before`: one opened meanwhile counts whole, one
 * that exited meanwhile is missed, so the figure is a floor.
 */
export function backendCpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}
