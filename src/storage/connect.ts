import { join } from 'node:path';
import type { Env } from '../config/env.ts';
import { LocalStorage } from './local-storage.ts';
import { S3Storage } from './s3-storage.ts';
import type { Storage } from './storage.ts';

/**
 * `S3_BUCKET` set → the S3-compatible store; otherwise local disk under `DATA_DIR/files`, whose
 * stale partial writes (left by a crash mid-upload) are swept in the background at start.
 */
export function connectStorage(
  env: Pick<Env, 'dataDir' | 's3'>,
  onSweep: (removed: number, err?: unknown) => void = () => {},
): Storage {
  if (env.s3) return new S3Storage(env.s3);
  const local = new LocalStorage(join(env.dataDir, 'files'));
  local.sweepStaleParts().then(
    (removed) => onSweep(removed),
    (err: unknown) => onSweep(0, err),
  );
  return local;
}
