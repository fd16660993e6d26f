/** A request a fake upstream received, as tests assert on it. */
export interface Recorded {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body, the raw text when it is not JSON, undefined for a GET. */
  body: any;
}

/** Reads and records one request of a fake upstream (the body is consumed here). */
export async function recordRequest(req: Request, into: Recorded[]): Promise<Recorded> {
  const text = req.method === 'GET' ? '' : await req.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  const recorded = {
    at: Date.now(),
    method: req.method,
    path: new URL(req.url).pathname,
    headers: Object.fromEntries(req.headers),
    body,
  };
  into.push(recorded);
  return recorded;
}
