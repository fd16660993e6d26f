/** Runs a command to its end and returns what it printed and its exit code. */
export async function runCommand(
  argv: string[],
  opts: { cwd?: string; env: Record<string, string> },
): Promise<{ out: string; err: string; code: number }> {
  const proc = Bun.spawn(argv, { cwd: opts.cwd, env: opts.env, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}
