import { HttpError } from '../http/errors.ts';

/** The motion-preset endpoint's own error shape (spec "Other shapes"): `{code, error: {message, code}}`. */
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
