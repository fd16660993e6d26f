import { join } from 'node:path';

/**
 * A throwaway self-signed certificate in `dir` (the `openssl` command line) for 127.0.0.1 and
 * `names`, so a fake upstream can speak TLS as a real provider does (benchmarks, the proxy test);
 * a process trusts it with `NODE_EXTRA_CA_CERTS=<certFile>`.
 */
export async function selfSignedCert(
  dir: string,
  names: string[] = [],
): Promise<{ certFile: string; keyFile: string }> {
  const certFile = join(dir, 'upstream-cert.pem');
  const keyFile = join(dir, 'upstream-key.pem');
  const made = Bun.spawnSync(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      `subjectAltName=${['IP:127.0.0.1', ...names.map((name) => `DNS:${name}`)].join(',')}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdout: 'ignore', stderr: 'pipe' },
  );
  if (made.exitCode !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr.toString()}`);
  return { certFile, keyFile };
}
