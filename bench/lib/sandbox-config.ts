import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes a gateway config with the built-in sandbox provider's `sandbox/echo` only (an LLM that
 * answers without an upstream) into `dir`, and returns its path.
 */
export async function writeSandboxConfig(dir: string): Promise<string> {
  const path = join(dir, 'gateway.yaml');
  await writeFile(
    path,
    [
      'providers:',
      '  - {id: sandbox, kind: sandbox}',
      'models:',
      '  - {id: sandbox/echo, category: llm, display_name: Echo, pricing: {input_per_mtok: 1, output_per_mtok: 2}}',
      '',
    ].join('\n'),
  );
  return path;
}
