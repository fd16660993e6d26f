import { resolve } from 'node:path';
import { replayBytes } from './replay-sse.ts';

/**
 * A fake LLM upstream that answers with fixture files: real HTTP on loopback, speaking the
 * Anthropic Messages API (`POST /v1/messages`) and OpenAI chat completions
 * (`POST /v1/chat/completions`). The requested model names the fixture, relative to
 * tests/fixtures without extension (`recorded/anthropic-thinking`): a streamed request gets the
 * `.sse` file's bytes (cut into uneven chunks, as networks do), a non-streamed one the `.json`
 * file. Every request body is recorded so tests can assert what the gateway sent.
 */

const FIXTURES = resolve(import.meta.dir, '../fixtures');
/** Uneven chunk sizes: events reach the gateway split mid-line and mid-character. */
const CHUNKS = [61, 7, 130, 3, 257];

export interface FixtureRequest {
  path: string;
  /** The upstream's JSON body, as the gateway sent it. */
  body: any;
}

export interface FixtureLlmUpstream {
  /** API root including `/v1`, as a config's `base_url`. */
  baseUrl: string;
  requests: FixtureRequest[];
  /** The requests whose raw body contains `marker`. */
  find(marker: string): FixtureRequest[];
  stop(): Promise<void>;
}

function fileFor(model: unknown, ext: 'sse' | 'json'): string | undefined {
  if (typeof model !== 'string' || !/^[a-z-]+\/[a-z0-9.-]+$/.test(model)) return undefined;
  return `${FIXTURES}/${model}.${ext}`;
}

export function startFixtureLlmUpstream(): FixtureLlmUpstream {
  const requests: Array<FixtureRequest & { raw: string }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/chat/completions'))
        return new Response('not found', { status: 404 });
      const raw = await req.text();
      const body = JSON.parse(raw);
      requests.push({ path, body, raw });
      const file = fileFor(body.model, body.stream ? 'sse' : 'json');
      if (!file || !(await Bun.file(file).exists()))
        return Response.json(
          { error: { type: 'not_found_error', message: `no fixture for ${body.model}` } },
          { status: 404 },
        );
      const bytes = new Uint8Array(await Bun.file(file).arrayBuffer());
      if (!body.stream) return new Response(bytes, { headers: { 'content-type': 'application/json' } });
      return new Response(replayBytes(bytes, CHUNKS), { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    requests,
    find: (marker) => requests.filter((r) => r.raw.includes(marker)),
    async stop() {
      await server.stop(true);
    },
  };
}
