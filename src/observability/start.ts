import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { countProcessingTasks } from '../tasks/task-queue.repository.ts';
import { readTaskQueueDepthWith } from './metrics.ts';
import { tracingConfig } from './tracing-config.ts';
import { startTracing } from './tracing.ts';

/**
 * Wires what needs the running process: the queue depth gauge's reader and, when an OTLP
 * endpoint is configured, the tracing SDK. Returns what shutdown calls to export the last spans.
 */
export async function startObservability(db: Db, log: Logger): Promise<{ stop(): Promise<void> }> {
  readTaskQueueDepthWith(() => countProcessingTasks(db));
  const config = tracingConfig();
  if (!config) return { stop: async () => undefined };
  const traces = await startTracing(config);
  log.info('tracing on', { protocol: config.protocol, service: config.serviceName });
  return {
    async stop() {
      await traces.shutdown().catch(() => undefined);
    },
  };
}
