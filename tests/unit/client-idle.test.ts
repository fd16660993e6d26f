import { afterEach, expect, test } from 'bun:test';
import { holdClientConnection, useIdleControl } from '../../src/http/client-idle.ts';

afterEach(() => useIdleControl(undefined, 255));

test('a hold lifts the limit once and puts the configured one back once, however often it is released', () => {
  const calls: number[] = [];
  useIdleControl({ timeout: (_request, seconds) => calls.push(seconds) }, 42);
  const release = holdClientConnection(new Request('http://gw.local/v1/chat/completions'));
  release();
  release();
  expect(calls).toEqual([0, 42]);
});

test('a connection Bun no longer knows never makes the hold or its release throw (it runs in a settlement)', () => {
  useIdleControl(
    {
      timeout: () => {
        throw new Error('request already closed');
      },
    },
    255,
  );
  const release = holdClientConnection(new Request('http://gw.local/v1/messages'));
  expect(() => release()).not.toThrow();
});

test('without a server (requests handed in directly) a hold does nothing', () => {
  expect(() => holdClientConnection(new Request('http://gw.local/v1/responses'))()).not.toThrow();
});
