import { join } from 'node:path';
import type { Env } from '../config/env.ts';
import { LocalStorage } from './local-storage.ts';
import { S3Storage } from './s3-storage.ts';
import type { Storage } from './storage.ts';

/** `S3_BUCKET` set → the S3-compatible store; otherwise local disk under `DATA_DIR/files`. */
export function connectStorage(env: Pick<Env, 'dataDir' | 's3'>): Storage {
  return env.s3 ? new S3Storage(env.s3) : new LocalStorage(join(env.dataDir, 'files'));
}
