import type { Subprocess } from 'bun';

/**
 * Starts a benchmark helper script (a fake upstream, a webhook receiver) as its own process and
 * waits for the first line it prints, `{"port": N}`. Its output keeps being drained so the child
 * never blocks on a full pipe.
 */
export async function spawnPortPrinter(
  script: string,
  label: string,
  env: Record<string, string> = {},
): Promise<{ proc: Subprocess<'ignore', 'pipe', 'pipe'>; port: number }> {
  const proc = Bun.spawn([process.execPath, 'run', script], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 15_000;
  while (!text.includes('\n')) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`${label} did not start within 15 s`);
    const next = await Promise.race([reader.read(), Bun.sleep(left).then(() => ({ done: true, value: undefined }))]);
    if (next.done) throw new Error(`${label} exited: ${await new Response(proc.stderr).text()}`);
    text += decoder.decode(next.value, { stream: true });
  }
  void (async () => {
    while (!(await reader.read()).done) {
      // keep draining stdout
    }
  })().catch(() => {});
  void new Response(proc.stderr).arrayBuffer().catch(() => {});
  const port = Number(JSON.parse(text.split('\n')[0] ?? '{}').port);
  if (!port) throw new Error(`${label} printed no port: ${text}`);
  return { proc, port };
}
