import { HttpError } from '../http/errors.ts';

/** The gateway's reasons for refusing or failing an LLM call, independent of wire format. */
export type LlmErrorKind =
  | 'invalid_request'
  | 'authentication'
  | 'insufficient_balance'
  | 'permission_denied'
  | 'not_found'
  | 'rate_limit'
  | 'upstream'
  | 'timeout'
  | 'internal';

export type ErrorFamily = 'openai' | 'anthropic';

const STATUS: Record<LlmErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  insufficient_balance: 402,
  permission_denied: 403,
  not_found: 404,
  rate_limit: 429,
  upstream: 502,
  timeout: 504,
  internal: 500,
};

/** @see https://platform.openai.com/docs/guides/error-codes */
const OPENAI_TYPE: Record<LlmErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  insufficient_balance: 'insufficient_quota',
  permission_denied: 'permission_error',
  not_found: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  upstream: 'server_error',
  timeout: 'server_error',
  internal: 'server_error',
};

/** @see https://docs.anthropic.com/en/api/errors */
const ANTHROPIC_TYPE: Record<LlmErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  insufficient_balance: 'billing_error',
  permission_denied: 'permission_error',
  not_found: 'not_found_error',
  rate_limit: 'rate_limit_error',
  upstream: 'api_error',
  timeout: 'timeout_error',
  internal: 'api_error',
};

/** An LLM endpoint's error, rendered in the client's own format so its SDK raises the right class. */
export class LlmError extends HttpError {
  readonly status: number;
  constructor(
    readonly family: ErrorFamily,
    readonly kind: LlmErrorKind,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    status?: number,
  ) {
    super(message);
    this.name = 'LlmError';
    this.status = status ?? STATUS[kind];
    // A refused or failed call is charged nothing (docs/keys.md: every LLM answer names its cost).
    this.headers['x-gateway-cost-usd'] = '0';
  }

  body(): unknown {
    if (this.family === 'anthropic')
      return { type: 'error', error: { type: ANTHROPIC_TYPE[this.kind], message: this.message } };
    return { error: { message: this.message, type: OPENAI_TYPE[this.kind], param: this.param, code: this.code } };
  }
}

export function kindForStatus(status: number): LlmErrorKind {
  if (status === 401) return 'authentication';
  if (status === 402) return 'insufficient_balance';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limit';
  if (status === 504) return 'timeout';
  if (status >= 500) return status === 500 ? 'internal' : 'upstream';
  return 'invalid_request';
}
