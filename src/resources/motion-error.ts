import type { ErrorShaper } from '../http/error-handler.ts';
import { HttpError } from '../http/errors.ts';

/** The motion-preset endpoint's own error shape (docs/api-contract.md, "Error shapes"): `{code, error: {message, code}}`. */
export class MotionPresetError extends HttpError {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'MotionPresetError';
  }
  body() {
    return { code: this.status, error: { message: this.message, code: this.code } };
  }
}

/**
 * Generic failures (a query value that cannot be decoded, a crash) on the declared motion-preset
 * paths, `/<product>/motions` with or without `/v1`, in that shape; their bad values are 400s.
 */
export function motionErrorShapers(products: Iterable<string>): Array<{ prefix: string; shape: ErrorShaper }> {
  const shape: ErrorShaper = (status, message, kind) =>
    new MotionPresetError(
      status === 422 ? 400 : status,
      message,
      status >= 500 ? 'internal_error' : kind === 'not_found' ? 'not_found' : 'invalid_request',
    );
  return [...products].flatMap((product) =>
    [`/${product}/motions`, `/v1/${product}/motions`].map((prefix) => ({ prefix, shape })),
  );
}
