/**
 * JavaScript heap bytes a command allocates, read from JavaScriptCore's GC log: the command runs
 * with `BUN_JSC_logGC=1`, and the "bytes allocated this cycle" of every collection it logs are
 * summed. A cycle still open when it exits is not counted, so a command should end with a full
 * collection (`Bun.gc(true)`), or be measured at two lengths and the difference taken.
 */
export async function heapAllocated(command: string[]): Promise<{ bytes: number; cycles: number }> {
  const child = Bun.spawn(command, { env: { ...process.env, BUN_JSC_logGC: '1' }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`${command.join(' ')} failed (${code}): ${err.slice(-2000)}`);
  let bytes = 0;
  let cycles = 0;
  for (const m of `${out}\n${err}`.matchAll(/bytes allocated this cycle: (\d+)/g)) {
    bytes += Number(m[1]);
    cycles++;
  }
  return { bytes, cycles };
}
