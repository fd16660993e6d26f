import type { GatewayProcess } from './gateway-process.ts';

/**
 * `workers` concurrent callers make `sandbox/echo` chat calls on `gw` (every other one streamed)
 * for `forMs`, then the gateway is killed with SIGKILL. Answers the ids of the calls the client
 * received in full: a JSON answer, or a stream whose `data: [DONE]` arrived. The kill -9 tests
 * then check that each of them was billed.
 */
export async function callsUntilKilled(
  gw: GatewayProcess,
  key: string,
  opts: { workers: number; forMs: number },
): Promise<string[]> {
  const answered: string[] = [];
  let stop = false;
  const worker = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const stream = (w + i) % 2 === 0;
      try {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'sandbox/echo',
            messages: [{ role: 'user', content: `worker ${w} call ${i} with some words` }],
            stream,
          }),
        });
        const text = await res.text();
        if (res.status !== 200) continue;
        if (!stream) answered.push(JSON.parse(text).id);
        // A stream counts once its end arrived; its id is on every chunk.
        else if (text.trimEnd().endsWith('data: [DONE]'))
          answered.push(
            JSON.parse(
              text
                .split('\n')
                .find((l) => l.startsWith('data: {'))
                ?.slice(6) ?? '{}',
            ).id,
          );
      } catch {
        // the instance died mid-call: not answered
      }
    }
  };
  const workers = Array.from({ length: opts.workers }, (_, w) => worker(w));
  await Bun.sleep(opts.forMs);
  gw.proc.kill('SIGKILL');
  await gw.proc.exited;
  stop = true;
  await Promise.all(workers);
  return answered;
}
