/**
 * Upload benchmark: a 1 GiB multipart upload (curl -F streams it from a generated file) and a
 * 1 GiB file_url download from a local origin, through a gateway process; throughput and the
 * gateway's RSS growth, against a plain `cp` of the same file on the same disk.
 * Targets: RSS grows ≤ 64 MB; throughput ≥ half of the plain copy.
 *
 *   bun run bench/uploads.ts [--mode embedded|postgres+redis|both] [--mb 1024]
 *
 * Needs about 3× the file size free in the temp directory; everything written is deleted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../tests/helpers/api.ts';
import { ADMIN_TOKEN, MODES, startGateway, type GatewayProcess } from '../tests/helpers/gateway-process.ts';
import { sampleRss } from './lib/rss-sampler.ts';
import { table } from './lib/wrk.ts';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const sizeMb = Number(arg('--mb') ?? 1024);
const modeArg = arg('--mode') ?? 'embedded';
const modes = MODES.filter((m) => modeArg === 'both' || m.name === modeArg);
if (modes.length === 0) throw new Error(`unknown --mode ${modeArg}`);
const SIZE = sizeMb * 1024 * 1024;
const MB = 1024 * 1024;

const work = await mkdtemp(join(tmpdir(), 'gw-bench-uploads-'));
const free = Number((await run(['df', '--output=avail', '-B1', work])).split('\n')[1]);
process.stderr.write(`free space in ${work}: ${(free / 1024 ** 3).toFixed(1)} GiB\n`);
if (free < SIZE * 3.5)
  throw new Error(
    `need ${((SIZE * 3.5) / 1024 ** 3).toFixed(1)} GiB free in ${tmpdir()}, have ${(free / 1024 ** 3).toFixed(1)}`,
  );

async function run(cmd: string[]): Promise<string> {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}: ${err}`);
  return out;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const t0 = performance.now();
  const result = await fn();
  return { result, seconds: (performance.now() - t0) / 1000 };
}

/** Random 16 MiB blocks, each varied, so nothing along the way can shortcut the bytes. */
async function generate(path: string): Promise<string> {
  const writer = Bun.file(path).writer();
  const hasher = new Bun.CryptoHasher('sha256');
  const block = crypto.getRandomValues(new Uint8Array(16 * MB));
  for (let written = 0, i = 0; written < SIZE; i++) {
    new DataView(block.buffer).setUint32(0, i);
    const piece = block.subarray(0, Math.min(block.length, SIZE - written));
    writer.write(piece);
    hasher.update(piece);
    written += piece.length;
    await writer.flush();
  }
  await writer.end();
  return hasher.digest('hex');
}

async function sha256Of(url: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of (await fetch(url)).body as ReadableStream<Uint8Array>) hasher.update(chunk);
  return hasher.digest('hex');
}

const source = join(work, 'source.bin');
process.stderr.write(`generating ${sizeMb} MiB…\n`);
const digest = await generate(source);
// A first, small upload gets start-up behind us (PGlite's initdb garbage is collected on the
// first upload's first check), so the baseline below is the gateway's steady state.
const warmUp = join(work, 'warm-up.bin');
await Bun.write(warmUp, crypto.getRandomValues(new Uint8Array(64 * MB)));

// The reference: cp of the same file on the same disk; "+ fsync" is what the gateway also does
// (it syncs each stored file before making it visible).
const copy = join(work, 'copy.bin');
const cp = await timed(() => run(['cp', source, copy]));
const cpSync = await timed(() => run(['sync', copy]));
await rm(copy);
const rows: Array<Record<string, string | number>> = [
  {
    mode: '-',
    variant: 'cp (page cache)',
    seconds: cp.seconds.toFixed(2),
    'MB/s': Math.round(SIZE / MB / cp.seconds),
    'vs cp+fsync': '-',
    'RSS before MB': '-',
    'RSS growth MB': '-',
    sha256: 'n/a',
  },
  {
    mode: '-',
    variant: 'cp + fsync',
    seconds: (cp.seconds + cpSync.seconds).toFixed(2),
    'MB/s': Math.round(SIZE / MB / (cp.seconds + cpSync.seconds)),
    'vs cp+fsync': '1.00',
    'RSS before MB': '-',
    'RSS growth MB': '-',
    sha256: 'n/a',
  },
];
const reference = SIZE / (cp.seconds + cpSync.seconds);

const origin = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 255,
  fetch: () => new Response(Bun.file(source)),
});

const curlUpload = async (gw: GatewayProcess, key: string, path: string) => {
  const out = await run([
    'curl',
    '-sS',
    '--fail-with-body',
    '-X',
    'PUT',
    '-H',
    `Authorization: Bearer ${key}`,
    '-F',
    `file=@${path};type=application/octet-stream`,
    `${gw.url}/upload`,
  ]);
  return (JSON.parse(out) as { file_url: string }).file_url;
};

async function measure(gw: GatewayProcess, mode: string, variant: string, send: () => Promise<string>) {
  const { result, baselineKb, peakKb } = await sampleRss(gw.proc.pid, () => timed(send));
  const fileUrl = result.result;
  const ok = (await sha256Of(fileUrl)) === digest;
  const mbps = SIZE / MB / result.seconds;
  rows.push({
    mode,
    variant,
    seconds: result.seconds.toFixed(2),
    'MB/s': Math.round(mbps),
    'vs cp+fsync': (SIZE / result.seconds / reference).toFixed(2),
    'RSS before MB': Math.round(baselineKb / 1024),
    'RSS growth MB': ((peakKb - baselineKb) / 1024).toFixed(1),
    sha256: ok ? 'match' : 'MISMATCH',
  });
  process.stderr.write(
    `${mode} ${variant}: ${result.seconds.toFixed(2)} s, ${Math.round(mbps)} MB/s, RSS +${((peakKb - baselineKb) / 1024).toFixed(1)} MB, sha256 ${ok ? 'ok' : 'MISMATCH'}\n`,
  );
}

try {
  for (const mode of modes) {
    // Stored files go under DATA_DIR in both modes: keep them in the bench's own directory.
    const env = { DATA_DIR: join(work, `data-${mode.name}`), ...(await mode.env('benchuploads')) };
    const gw = await startGateway({ ...env, LOG_LEVEL: 'warn', ALLOW_PRIVATE_URLS: 'true' });
    try {
      const { userId, key } = await createAccount(gw, uniqueEmail('bench-uploads'), 0);
      // 1 GiB twice exceeds the free plan's day: use the topped-up plan (10 GiB a day).
      if (
        (await api(gw, 'POST', `/admin/accounts/${userId}/topup`, { key: ADMIN_TOKEN, body: { amount_usd: 5 } }))
          .status !== 200
      )
        throw new Error('top-up failed');
      await curlUpload(gw, key, warmUp);
      await Bun.sleep(1000);
      await measure(gw, mode.name, 'multipart (curl -F)', () => curlUpload(gw, key, source));
      await measure(gw, mode.name, 'file_url (local origin)', async () => {
        const res = await api(gw, 'PUT', '/upload', {
          key,
          body: { file_url: `http://127.0.0.1:${origin.port}/source.bin` },
        });
        if (res.status !== 200) throw new Error(`file_url upload: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body.file_url as string;
      });
    } finally {
      await gw.stop();
      await rm(env.DATA_DIR, { recursive: true, force: true });
    }
  }
} finally {
  origin.stop(true);
  await rm(work, { recursive: true, force: true });
}

console.log(`${sizeMb} MiB file, ${new Date().toISOString()}`);
console.log(table(rows));
