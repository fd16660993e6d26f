import { expect, test } from 'bun:test';
import { corsPreflight, withCors } from '../../src/http/cors.ts';

const preflight = (path: string, headers: Record<string, string>) =>
  corsPreflight(new Request(`http://gw.local${path}`, { method: 'OPTIONS', headers }));

test('a preflight on an API path is allowed for any origin, with the headers it asked for when they are header names', () => {
  const asked = { origin: 'https://app.example', 'access-control-request-method': 'POST' };
  const ok = preflight('/v1/chat/completions', {
    ...asked,
    'access-control-request-headers': 'authorization, content-type, x-stainless-os',
  });
  expect(ok?.status).toBe(204);
  expect(ok?.headers.get('access-control-allow-origin')).toBe('*');
  expect(ok?.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os');
  // Not a list of header names, or absurdly long: no headers are allowed (the browser then refuses).
  for (const bad of ['authorization;drop', 'a b', `x${',y'.repeat(2000)}`])
    expect(
      preflight('/v1/models', { ...asked, 'access-control-request-headers': bad })?.headers.has(
        'access-control-allow-headers',
      ),
    ).toBe(false);
  // Not a preflight, or not the API: the routes answer (the dashboard and admin get no CORS).
  expect(preflight('/v1/models', { origin: 'https://app.example' })).toBeUndefined();
  expect(preflight('/dashboard/api/session', asked)).toBeUndefined();
  expect(preflight('/admin/accounts', asked)).toBeUndefined();
  expect(corsPreflight(new Request('http://gw.local/v1/models', { headers: asked }))).toBeUndefined();
});

test('answers to browsers on API paths are readable; others are left as they are', () => {
  const from = (path: string, origin?: string) =>
    new Request(`http://gw.local${path}?q=1`, { headers: origin ? { origin } : {} });
  const answered = withCors(from('/v1/tasks', 'https://app.example'), new Response('{}'));
  expect(answered.headers.get('access-control-allow-origin')).toBe('*');
  expect(answered.headers.get('access-control-expose-headers')).toContain('x-request-id');
  expect(withCors(from('/v1/tasks'), new Response('{}')).headers.has('access-control-allow-origin')).toBe(false);
  expect(
    withCors(from('/dashboard/api/session', 'https://app.example'), new Response('{}')).headers.has(
      'access-control-allow-origin',
    ),
  ).toBe(false);
});
