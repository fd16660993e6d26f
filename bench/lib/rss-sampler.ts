/**
 * Samples a process's resident set (VmRSS of /proc/<pid>/status) every `intervalMs` while work
 * runs, for "how much did memory grow during this" figures. VmHWM would be the lifetime peak and
 * include start-up (PGlite's initdb), so the current RSS is sampled instead.
 */
export async function rssKb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
}

export async function sampleRss<T>(
  pid: number,
  work: () => Promise<T>,
  intervalMs = 10,
): Promise<{ result: T; baselineKb: number; peakKb: number }> {
  const baselineKb = await rssKb(pid);
  let peakKb = baselineKb;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peakKb = Math.max(peakKb, await rssKb(pid).catch(() => 0));
      await Bun.sleep(intervalMs);
    }
  })();
  try {
    const result = await work();
    return { result, baselineKb, peakKb: Math.max(peakKb, await rssKb(pid)) };
  } finally {
    running = false;
    await sampler;
  }
}
