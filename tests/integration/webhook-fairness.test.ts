import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { reply, WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { MAX_IN_FLIGHT_PER_ACCOUNT } from '../../src/webhooks/deliveries.repository.ts';

/**
 * Webhook deliveries are shared fairly (src/webhooks/deliveries.repository.ts): one account whose
 * receiver hangs (each send holds its slot for the 10 s timeout) has at most
 * MAX_IN_FLIGHT_PER_ACCOUNT deliveries in flight, so more of them than the instance has slots
 * (256) no longer delay another account's callback. Failed tasks are refunded: such a flood
 * costs its account nothing.
 */
const FLOOD = 280;

for (const mode of MODES) {
  describe(`webhook fairness [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let rx: WebhookReceiver;
    beforeAll(async () => {
      rx = WebhookReceiver.start();
      gw = await startGateway({ ...(await mode.env('whfair')), ALLOW_PRIVATE_URLS: 'true' });
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
      rx?.stop();
    });

    test("one account's hanging receiver does not delay another account's callbacks", async () => {
      const { key: flooder } = await createAccount(gw, uniqueEmail('wh-flood'), 20);
      const { key: other } = await createAccount(gw, uniqueEmail('wh-other'), 5);
      const hang = rx.url('/hang', () => reply.hang(12_000));
      for (let i = 0; i < FLOOD; i += 40)
        await Promise.all(
          Array.from({ length: Math.min(40, FLOOD - i) }, () =>
            api(gw, 'POST', '/v1/tasks', {
              key: flooder,
              body: { model: 'sandbox/image', input: { prompt: 'x', fail: true, delay_ms: 0 }, callback_url: hang },
            }).then((res) => expect(res.status).toBe(200)),
          ),
        );
      // The flood's first deliveries are in flight (hanging).
      await rx.waitForCount({ path: '/hang' }, MAX_IN_FLIGHT_PER_ACCOUNT, 15_000);
      const created = await api(gw, 'POST', '/v1/tasks', {
        key: other,
        body: { model: 'sandbox/image', input: { prompt: 'y', delay_ms: 0 }, callback_url: rx.url('/other') },
      });
      expect(created.status).toBe(200);
      const startedAt = Date.now();
      const [got] = await rx.waitForCount({ path: '/other' }, 1, 15_000);
      expect(got?.at).toBeDefined();
      // Not behind the flood (a 10 s timeout at the least): within a few seconds of the finish.
      expect((got?.at ?? Number.POSITIVE_INFINITY) - startedAt).toBeLessThan(4_000);
      // The flooder keeps to its share: never more than the bound in flight at once.
      const hung = rx.received({ path: '/hang' });
      const firstWave = hung.filter((r) => r.at - (hung[0]?.at ?? 0) < 9_000);
      expect(firstWave.length).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ACCOUNT);
    }, 60_000);
  });
}
