/**
 * The floor beside a benchmark stack: bench/lib/bare-proxy.ts started as its own process,
 * relaying to the stack's fake upstream and pinned to the gateway's core when the stack is
 * pinned, so its CPU and latency are read under the same conditions as the gateway's.
 */
import { resolve } from 'node:path';
import { GATEWAY_CORE, pin } from './cpu-pin.ts';
import type { H2loadTarget } from './h2load.ts';
import type { LlmBenchStack } from './llm-bench-stack.ts';
import { spawnPortPrinter } from './spawn-port-printer.ts';
import { stopProcesses } from './stop-processes.ts';

export interface BareProxy {
  proc: Awaited<ReturnType<typeof spawnPortPrinter>>['proc'];
  port: number;
  /** The same request to the fake upstream, sent through the bare proxy instead of directly. */
  via(direct: H2loadTarget): H2loadTarget;
  stop(): Promise<void>;
}

export async function startBareProxy(stack: Pick<LlmBenchStack, 'upstreamPort' | 'pinned'>): Promise<BareProxy> {
  const { proc, port } = await spawnPortPrinter(resolve(import.meta.dir, 'bare-proxy.ts'), 'bare proxy', {
    UPSTREAM: `http://127.0.0.1:${stack.upstreamPort}`,
  });
  if (stack.pinned) pin(proc.pid, GATEWAY_CORE);
  // The stack's own Ctrl-C handler exits the process; the proxy must not outlive it.
  process.once('exit', () => proc.kill());
  return {
    proc,
    port,
    via: (direct) => ({ ...direct, url: direct.url.replace(`:${stack.upstreamPort}/`, `:${port}/`) }),
    stop: () => stopProcesses([], [proc], 5000),
  };
}
