/**
 * Issue 2 benchmark: authenticated GET /v1/models/{id} and GET /v1/account at 1, 16 and 64
 * connections, on Postgres+Redis and on the embedded default. Prints a Markdown table.
 *
 *   bun run bench/foundation.ts [--seconds 10]
 */
import { api, createAccount, uniqueEmail } from '../tests/helpers/api.ts';
import { MODES, startGateway } from '../tests/helpers/gateway-process.ts';
import { peakRssMb, requireWrk, runWrk, table } from './lib/wrk.ts';
import { numberArg } from './lib/cli-args.ts';

const seconds = numberArg('--seconds', 10);
requireWrk();
const rows: Array<Record<string, string | number>> = [];

for (const mode of MODES) {
  const gw = await startGateway({
    ...(await mode.env('bench')),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
  });
  try {
    const { key } = await createAccount(gw, uniqueEmail('bench'));
    const headers = { authorization: `Bearer ${key}` };
    for (const path of ['/v1/models/sandbox/echo', '/v1/account']) {
      if ((await api(gw, 'GET', path, { key })).status !== 200) throw new Error(`${path} is not 200`);
      for (const connections of [1, 16, 64]) {
        await runWrk({ url: gw.url + path, connections, seconds: 2, headers }); // warm-up
        const r = await runWrk({ url: gw.url + path, connections, seconds, headers });
        rows.push({
          mode: mode.name,
          endpoint: `GET ${path}`,
          connections,
          'req/s': Math.round(r.requestsPerSec),
          'p50 ms': r.p50Ms.toFixed(2),
          'p99 ms': r.p99Ms.toFixed(2),
          'non-2xx': r.non2xx,
          'peak RSS MB': await peakRssMb(gw.proc.pid),
        });
        process.stderr.write(
          `${mode.name} ${path} c=${connections}: ${Math.round(r.requestsPerSec)} req/s p99 ${r.p99Ms.toFixed(2)} ms\n`,
        );
      }
    }
  } finally {
    await gw.stop();
  }
}
console.log(table(rows));
