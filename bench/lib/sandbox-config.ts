import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const PRICING = 'pricing: {input_per_mtok: 1, output_per_mtok: 2}';

/**
 * Writes a benchmark gateway's config into `dir` and returns its path: the built-in sandbox
 * provider's `sandbox/echo` (an LLM that answers without an upstream) when `sandbox`, and with
 * `upstreamPort` one `openai` provider on the zero-latency fake upstream there
 * (bench/lib/fake-openai-upstream.ts), serving `fake/bench` and `fake/paced` (the same stream,
 * each event its own write); `upstreamTls`: that upstream speaks HTTPS.
 */
export async function writeBenchConfig(
  dir: string,
  opts: { sandbox?: boolean; upstreamPort?: number; upstreamTls?: boolean },
): Promise<string> {
  const path = join(dir, 'gateway.yaml');
  const fake = opts.upstreamPort !== undefined;
  await writeFile(
    path,
    [
      'providers:',
      ...(fake
        ? [
            `  - {id: fake, kind: openai, base_url: "${opts.upstreamTls ? 'https' : 'http'}://127.0.0.1:${opts.upstreamPort}/v1", api_key: x}`,
          ]
        : []),
      ...(opts.sandbox ? ['  - {id: sandbox, kind: sandbox}'] : []),
      'models:',
      ...(fake
        ? [
            `  - {id: fake/bench, category: llm, upstream_model: bench, display_name: Bench, ${PRICING}}`,
            `  - {id: fake/paced, category: llm, upstream_model: bench-paced, display_name: Paced, ${PRICING}}`,
          ]
        : []),
      ...(opts.sandbox ? [`  - {id: sandbox/echo, category: llm, display_name: Echo, ${PRICING}}`] : []),
      '',
    ].join('\n'),
  );
  return path;
}

/** A config with the sandbox's `sandbox/echo` only. */
export const writeSandboxConfig = (dir: string): Promise<string> => writeBenchConfig(dir, { sandbox: true });
