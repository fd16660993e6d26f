import type { Subprocess } from 'bun';
import type { GatewayProcess } from '../../tests/helpers/gateway-process.ts';

/**
 * Stops a benchmark's processes: gateways drain (SIGTERM), helper processes still running get
 * SIGTERM, and whatever is still running after `killAfterMs` is killed, so a benchmark never
 * hangs on exit.
 */
export async function stopProcesses(
  gateways: Iterable<GatewayProcess | undefined>,
  helpers: Iterable<Subprocess | undefined>,
  killAfterMs: number,
): Promise<void> {
  const running = [...gateways].filter((g): g is GatewayProcess => g !== undefined);
  const others = [...helpers].filter((p): p is Subprocess => p !== undefined);
  const stops: Array<Promise<unknown>> = running.map((g) => g.stop());
  for (const p of others) {
    if (p.exitCode !== null) continue;
    p.kill('SIGTERM');
    stops.push(p.exited);
  }
  const killer = setTimeout(() => {
    for (const g of running) g.proc.kill('SIGKILL');
    for (const p of others) p.kill('SIGKILL');
  }, killAfterMs);
  await Promise.allSettled(stops);
  clearTimeout(killer);
}
