/**
 * Bun closes a client connection on which nothing has been written for the server's
 * `idleTimeout` (at most 255 s: `CLIENT_IDLE_TIMEOUT_S`), a streamed answer's silences included.
 * An LLM stream may be silent far longer — the provider's `stream_idle_timeout_ms` allows up to
 * an hour, for models that stop to think mid-answer — and the client was cut at 255 s, losing the
 * rest of an answer it was charged for. So while a call waits on its upstream, Bun's limit is off
 * for its connection (the gateway's own timers bound that wait), and it is put back once the
 * call's answer is complete, so an idle keep-alive connection is still closed in time. (A request
 * with a body that has not been answered yet is not cut by Bun; the hold covers it anyway.)
 */

/** What the server offers (Bun's `Server.timeout`); absent when requests come without sockets. */
export interface IdleControl {
  timeout(request: Request, seconds: number): void;
}

let server: IdleControl | undefined;
let idleSeconds = 255;

/** The server whose connections are held open, and its idle limit (src/app/serve.ts). */
export function useIdleControl(control: IdleControl | undefined, seconds: number): void {
  server = control;
  idleSeconds = seconds;
}

/**
 * Lifts the idle limit of `request`'s connection until the returned function puts it back
 * (calling that more than once does nothing).
 */
export function holdClientConnection(request: Request): () => void {
  const control = server;
  if (!control) return () => undefined;
  setIdle(control, request, 0);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    setIdle(control, request, idleSeconds);
  };
}

/**
 * Never throws: the release runs inside a stream's settlement, which must go on whatever state
 * the client's connection is in (Bun 1.4 does not throw for one already closed; this keeps a
 * later Bun from turning a gone client into an unsettled call).
 */
function setIdle(control: IdleControl, request: Request, seconds: number): void {
  try {
    control.timeout(request, seconds);
  } catch {
    // the connection is gone: nothing to hold or release
  }
}
