import { bootstrap } from './app/bootstrap.ts';
import { buildApp } from './app/build-app.ts';
import { serve } from './app/serve.ts';
import { WORKER_INDEX_ENV, watchParent } from './cluster/worker-role.ts';
import { WorkerSupervisor } from './cluster/worker-supervisor.ts';
import { primaryMetricsText, workerMetricsText } from './cluster/cluster-metrics.ts';
import { ConfigError } from './config/config-error.ts';
import { startObservability } from './observability/start.ts';

async function main(): Promise<void> {
  // A worker asked to stop while it is still starting finishes starting, then drains like any
  // other. (Signalled before this line, it dies of the signal, having served nothing.)
  let signalledEarly: string | undefined;
  const early = (signal: string) => {
    signalledEarly ??= signal;
  };
  if (process.env[WORKER_INDEX_ENV]) {
    process.on('SIGTERM', early);
    process.on('SIGINT', early);
  }
  const { ctx, services, database, firstKey } = await bootstrap();
  const observability = await startObservability(ctx.db, ctx.log);
  const isWorker = ctx.env.workerIndex > 0;
  const workers =
    !isWorker && ctx.env.workers > 1 ? new WorkerSupervisor({ count: ctx.env.workers - 1, log: ctx.log }) : undefined;
  // A scrape lands on any process: each answers with the whole host's figures.
  const metricsText = workers ? primaryMetricsText(workers) : isWorker ? workerMetricsText() : undefined;
  const app = buildApp(ctx, services, { metricsText });
  const http = serve(ctx, app);
  // The primary has migrated and listens: its workers join it on the same port (docs/scaling.md).
  workers?.start(http.server.port ?? ctx.env.port);
  // Background work starts once the instance serves: media tasks and webhook deliveries.
  services.runner.start();
  services.webhooks.start();
  services.reservations.start();
  services.keyBudgets.start();
  if (Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS ?? 256) < 1024) {
    // Read by Bun at start only: every upstream call beyond 256 at once would queue.
    ctx.log.warn(
      'outbound fetches are capped at 256 at once; start with BUN_CONFIG_MAX_HTTP_REQUESTS=4096 (npm start does)',
    );
  }
  ctx.log.info('listening', {
    url: ctx.env.publicUrl,
    database: database.kind,
    store: ctx.store.kind,
    instance: ctx.env.instanceId,
    ...(ctx.env.workers > 1 ? { workers: ctx.env.workers } : {}),
  });
  ctx.log.flush();

  if (firstKey) {
    // Printed once, on the very first start; the key is stored only as a hash.
    process.stdout.write(
      `\n  Gateway ready at ${ctx.env.publicUrl}\n  First account: ${firstKey.email} with $${firstKey.balanceUsd} balance\n  API key (shown once, keep it): ${firstKey.apiKey}\n\n  Try: curl -H "Authorization: Bearer ${firstKey.apiKey}" ${ctx.env.publicUrl}/v1/models\n\n`,
    );
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.log.info('shutting down', { signal, in_flight: http.inFlight() });
    // Workers drain at the same time as this process; it exits once they all have.
    const workersStopped = workers?.stop(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM') ?? Promise.resolve(true);
    // Live task streams end first: the server waits for open connections to close.
    await services.events.close();
    await http.stop();
    await services.runner.stop();
    await services.webhooks.stop();
    await services.usage.stop();
    await services.reservations.stop();
    await services.keyBudgets.stop();
    await ctx.keyUsage?.stop();
    await observability.stop();
    ctx.rateLimiter.stop();
    await ctx.rateLimiter.flush();
    await ctx.keyLimits.flush(); // give-backs and extra tokens not yet sent
    await ctx.accounts.flush().catch(() => undefined); // invalidations still waiting (the TTL backs a lost one)
    await ctx.store.close();
    await database.close();
    const workersClean = await workersStopped;
    ctx.log.info('stopped');
    ctx.log.flush();
    process.exit(workersClean ? 0 : 1);
  };
  process.off('SIGTERM', early);
  process.off('SIGINT', early);
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (signalledEarly) void shutdown(signalledEarly);
  // A primary killed outright cannot forward a signal: its workers drain and stop by themselves.
  if (isWorker) watchParent(() => void shutdown('parent exited'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
  } else {
    process.stderr.write(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(1);
});
