import { Elysia, ParseError } from 'elysia';
import type { ErrorShaper } from './error-handler.ts';
import { HttpError } from './errors.ts';
import { BodyError } from './request-body.ts';

function render(error: HttpError): Response {
  return new Response(JSON.stringify(error.body()), {
    status: error.status,
    headers: { 'content-type': 'application/json', ...error.headers },
  });
}

/**
 * Registered just before the general error handler. Two things it alone knows about:
 * - Elysia wraps whatever a parse hook throws in a ParseError (rendered as "not valid JSON").
 *   The gateway's parse hooks authenticate before reading and read under limits, so what they
 *   throw (401, 403, 429, 413…) is unwrapped and rendered as itself.
 * - A BodyError is an envelope; on paths with a shape of their own (the LLM formats) it is
 *   rendered in that shape instead, keeping its status and its `connection: close`.
 */
export function bodyErrorHandler(shapers: Array<{ prefix: string; shape: ErrorShaper }> = []) {
  return new Elysia({ name: 'body-error-handler' }).onError({ as: 'global' }, ({ error, request }) => {
    const cause = error instanceof ParseError && error.cause instanceof HttpError ? error.cause : error;
    if (cause instanceof BodyError) {
      const path = new URL(request.url).pathname.replace(/\/{2,}/g, '/');
      const shape = shapers.find((s) => path.startsWith(s.prefix))?.shape;
      if (!shape) return render(cause);
      const shaped = shape(cause.status, cause.message, 'invalid_json');
      shaped.headers = { ...shaped.headers, ...cause.headers };
      return render(shaped);
    }
    if (cause !== error) return render(cause as HttpError);
    return undefined;
  });
}
