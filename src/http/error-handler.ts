import { Elysia } from 'elysia';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { EnvelopeError, HttpError, OpenAIStyleError } from './errors.ts';
import { requestTargetProblem } from './request-target.ts';
import { ProviderRequestError } from '../../providers/common/provider-request-error.ts';

/**
 * Turns a generic failure (bad JSON, unknown route, crash) into an HttpError in the shape the
 * path's clients expect. LLM routes register their own format's shape by path prefix.
 */
export type ErrorShaper = (
  status: number,
  message: string,
  kind: 'invalid_json' | 'not_found' | 'internal' | 'bad_request',
) => HttpError;

const envelopeShaper: ErrorShaper = (status, message) => new EnvelopeError(status, message);

/** The model endpoints answer every error in their OpenAI-style shape, whatever module serves them. */
const builtInShapers: Array<{ test: (path: string) => boolean; shape: ErrorShaper }> = [
  {
    test: (path) => path.startsWith('/v1/models'),
    shape: (status, message, kind) =>
      status >= 500
        ? new OpenAIStyleError(status, message, 'internal_error', 'server_error')
        : new OpenAIStyleError(
            status,
            message,
            kind === 'not_found' ? 'not_found' : 'invalid_request',
            'invalid_request_error',
          ),
  },
];

function render(error: HttpError): Response {
  return new Response(JSON.stringify(error.body()), {
    status: error.status,
    headers: { 'content-type': 'application/json', ...error.headers },
  });
}

/** Registered first on the root app: the one place errors become responses. */
export function errorHandler(log: Logger, shapers: Array<{ prefix: string; shape: ErrorShaper }> = []) {
  const shaperFor = (request: Request): ErrorShaper => {
    // Repeated slashes name the same route to the router (`//clips/motions`), so the same shape.
    const path = new URL(request.url).pathname.replace(/\/{2,}/g, '/');
    return (
      shapers.find((s) => path.startsWith(s.prefix))?.shape ??
      builtInShapers.find((s) => s.test(path))?.shape ??
      envelopeShaper
    );
  };
  return (
    new Elysia({ name: 'error-handler' })
      // Before routing and auth: a path or query value that cannot be decoded, or holds NUL, is a
      // 4xx in the path's own shape and never reaches a handler (src/http/request-target.ts).
      // onRequest runs for every request of the app, whichever plugin registers it.
      .onRequest(({ request }) => {
        const problem = requestTargetProblem(request.url);
        if (problem) return render(shaperFor(request)(problem.status, problem.message, 'bad_request'));
      })
      .onError({ as: 'global' }, ({ code, error, request }) => {
        if (error instanceof HttpError) return render(error);
        // A provider's refusal (bad input, an upstream that cannot serve it), in this path's shape.
        if (error instanceof ProviderRequestError)
          return render(
            shaperFor(request)(error.status, error.message, error.status >= 500 ? 'internal' : 'bad_request'),
          );
        const shape = shaperFor(request);
        switch (code) {
          case 'PARSE':
            return render(shape(422, 'request body is not valid JSON', 'invalid_json'));
          case 'NOT_FOUND':
            return render(shape(404, `no route for ${request.method} ${new URL(request.url).pathname}`, 'not_found'));
          default:
            // Never leak internals: the client gets a plain 500, the log gets the stack.
            log.error('unhandled error', {
              code: String(code),
              path: new URL(request.url).pathname,
              ...errorFields(error),
            });
            return render(shape(500, 'internal error', 'internal'));
        }
      })
  );
}
