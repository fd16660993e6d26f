import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { WebhookReceiver, verifySignature } from '../helpers/webhook-receiver.ts';
import { DESKTOP, launchChromium, screenshots } from './chromium.ts';

/**
 * The dashboard in a real browser (issue 6): Chromium driven by playwright-core against a gateway
 * process (embedded mode), every step done the way a person would — labels, buttons, links.
 * The steps share one signed-in page and run in order. Screenshots of each page, desktop and
 * 390 px phone, land in tests/screenshots/.
 */

const embedded = MODES.find((m) => m.name === 'embedded') as (typeof MODES)[number];

/** Polls GET /v1/tasks/{id} until `until` holds. */
async function waitTask(gw: GatewayProcess, key: string, id: string, until: (task: any) => boolean): Promise<any> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
    if (res.status === 200 && until(res.body.data)) return res.body.data;
    if (Date.now() > deadline) throw new Error(`task ${id} not as expected: ${JSON.stringify(res.body)}`);
    await Bun.sleep(50);
  }
}

async function createTask(gw: GatewayProcess, key: string, body: object): Promise<string> {
  const res = await api(gw, 'POST', '/v1/tasks', { key, body });
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.task_id;
}

const today = () => {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

describe('dashboard in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let gw: GatewayProcess;
  let rx: WebhookReceiver;
  let key: string;
  const pageErrors: string[] = [];

  const text = (testId: string) => page.getByTestId(testId).textContent();
  const nav = async (label: string, heading: string) => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: label, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  beforeAll(async () => {
    browser = await launchChromium();
    rx = WebhookReceiver.start();
    gw = await startGateway({
      ...(await embedded.env('dashboard')),
      ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,2,3,4',
    });
    ({ key } = await createAccount(gw, uniqueEmail('browser'), 10));
    context = await browser.newContext({ viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    rx?.stop();
    await gw?.stop();
  });

  test('sign in with the API key: a session cookie that is HttpOnly, SameSite=Strict and holds no key', async () => {
    await page.goto(`${gw.url}/dashboard/tasks`);
    await page.getByRole('heading', { name: 'Sign in to your dashboard' }).waitFor();
    expect(page.url()).toContain('/dashboard/sign-in?next=%2Fdashboard%2Ftasks');
    await screenshots(page, '01-sign-in');

    await page.getByLabel('API key').fill('gw_not_a_real_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('invalid API key');

    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the user was headed.
    await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();

    const cookie = (await context.cookies()).find((c) => c.name === 'gw_session');
    expect(cookie).toBeDefined();
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    expect(cookie?.path).toBe('/');
    expect(cookie?.value).not.toContain(key.slice(3, 12));
    // HttpOnly: page script cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain('gw_session');
  });

  test('playground: a prompt to sandbox/echo streams its answer word by word', async () => {
    await nav('Playground', 'Playground');
    await page.getByLabel('LLM', { exact: true }).selectOption('sandbox/echo');
    await page.getByLabel('Prompt').fill('the quick brown fox jumps');
    // Record the answer as each delta lands, to see it grow rather than arrive whole.
    await page.evaluate(() => {
      const answer = document.querySelector('[data-testid=chat-answer]') as HTMLElement;
      const seen: string[] = [];
      (window as any).__answers = seen;
      new MutationObserver(() => seen.push(answer.textContent ?? '')).observe(answer, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=chat-status]')?.textContent?.startsWith('Done'),
    );
    expect(await text('chat-answer')).toBe('echo: the quick brown fox jumps');
    const seen: string[] = (await page.evaluate(() => (window as any).__answers)).filter(Boolean);
    expect(seen.length).toBeGreaterThan(2);
    for (let i = 1; i < seen.length; i++) expect((seen[i] as string).startsWith(seen[i - 1] as string)).toBe(true);
    expect(await text('chat-status')).toMatch(/Done: \d+ chunks · finish reason stop · 5 input \/ 6 output tokens/);
    await screenshots(page, '06-playground-chat');
  });

  test('webhooks: turn signing on, and a delivery verifies with the secret the page shows', async () => {
    await nav('Webhooks', 'Webhooks');
    expect(await text('signing-state')).toBe('Off');
    await page.getByRole('switch', { name: 'Sign webhook deliveries' }).check();
    await page.waitForFunction(() => document.querySelector('[data-testid=signing-state]')?.textContent === 'On');
    const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const standardSecret = await page.getByLabel('Standard Webhooks secret', { exact: true }).inputValue();
    expect(standardSecret).toBe(`whsec_${Buffer.from(secret, 'hex').toString('base64')}`);
    expect(await page.locator('pre code').first().textContent()).toContain(
      "createHmac('sha256', SECRET).update(`${timestamp}.${rawBody}`)",
    );
    await page.getByRole('button', { name: 'Copy signing secret' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshots(page, '04-webhooks');

    // A media task from the playground, with a callback to a local receiver.
    await nav('Playground', 'Playground');
    await page.getByLabel('Model', { exact: true }).selectOption('sandbox/image');
    await page
      .getByLabel('Input (JSON)')
      .fill(JSON.stringify({ prompt: 'a red fox', width: 320, height: 180, delay_ms: 300 }, null, 2));
    await page.getByLabel('Callback URL (optional)').fill(rx.url('/signed'));
    await page.getByRole('button', { name: 'Run task' }).click();
    const image = page.getByTestId('media-progress').locator('img');
    await image.waitFor();
    expect(await text('media-progress')).toContain('completed');
    expect(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(320);

    const [delivery] = await rx.waitForCount({ path: '/signed' }, 1, 15_000);
    expect(delivery?.json.status).toBe('completed');
    expect(verifySignature(delivery!, secret)).toBe(true);
    expect(new Webhook(standardSecret).verify(delivery!.body, delivery!.headers)).toEqual(delivery!.json);
    expect(verifySignature({ ...delivery!, body: delivery!.body.replace('completed', 'failed') }, secret)).toBe(false);
    await screenshots(page, '06-playground-media');
  });

  test('API key: regenerate with confirmation; the old key is refused at once and the session continues', async () => {
    await nav('API key', 'API key');
    await page.getByRole('button', { name: 'Regenerate key…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Regenerate the API key?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByText('You are still signed in, now with the new key.').waitFor();
    const newKey = await page.getByLabel('New API key', { exact: true }).inputValue();
    expect(newKey).toStartWith('gw_');
    expect(newKey).not.toBe(key);

    const old = await fetch(`${gw.url}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
    expect(old.status).toBe(401);
    const fresh = await fetch(`${gw.url}/v1/account`, { headers: { authorization: `Bearer ${newKey}` } });
    expect(fresh.status).toBe(200);
    await screenshots(page, '03-api-key');
    key = newKey;

    await nav('Overview', 'Overview');
    expect(await text('balance')).toMatch(/^\$9\.9\d+$/);
  });

  test('tasks: found by status, category, provider, model and date; paginated', async () => {
    const video = await createTask(gw, key, {
      model: 'sandbox/video',
      input: { prompt: 'storm', fail: true, delay_ms: 0 },
    });
    const speech = await Promise.all(
      Array.from({ length: 11 }, (_, i) =>
        createTask(gw, key, { model: 'sandbox/speech', input: { text: `line ${i}`, delay_ms: 0 } }),
      ),
    );
    for (const id of [video, ...speech]) await waitTask(gw, key, id, (t) => t.status !== 'processing');

    await nav('Tasks', 'Tasks');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('checkbox', { name: 'video' }).check();
    await page.getByLabel('Created from').fill(today());
    await page.getByLabel('Created to').fill(today());
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=tasks-summary]')?.textContent?.endsWith('· 1 task'),
    );
    expect(page.url()).toContain('status=failed');
    expect(page.url()).toContain('category=video');
    const rows = page.locator('table tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('sandbox/video');
    expect(await rows.first().getByRole('link').textContent()).toBe(video);

    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByLabel('Model').fill('sandbox/image');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=tasks-summary]')?.textContent?.endsWith('· 1 task'),
    );

    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByLabel('Provider').fill('sandbox');
    await page.getByRole('checkbox', { name: 'audio' }).check();
    await page.getByLabel('Per page').selectOption('10');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid=tasks-summary]')?.textContent === 'Page 1 of 2 · 11 tasks',
    );
    expect(await rows.count()).toBe(10);
    await screenshots(page, '05-tasks');
    await page.getByRole('link', { name: 'Next' }).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid=tasks-summary]')?.textContent === 'Page 2 of 2 · 11 tasks',
    );
    expect(await rows.count()).toBe(1);
    // Back returns to page 1 with the same filters.
    await page.goBack();
    await page.waitForFunction(
      () => document.querySelector('[data-testid=tasks-summary]')?.textContent === 'Page 1 of 2 · 11 tasks',
    );
  });

  test('a task page: output inline, the callback log, and Redeliver until it disables at 10 attempts', async () => {
    const id = await createTask(gw, key, {
      model: 'sandbox/image',
      input: { prompt: 'a lighthouse', width: 256, height: 256, delay_ms: 0 },
      callback_url: rx.url('/manual'),
    });
    await waitTask(gw, key, id, (t) => t.callback_result?.length === 1);

    // A deep link, opened afresh: the session comes from the cookie.
    await page.goto(`${gw.url}/dashboard/tasks/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Task' }).waitFor();
    const image = page.locator('.media img');
    await image.waitFor();
    await page.waitForFunction(
      () => (document.querySelector('.media img') as HTMLImageElement | null)?.naturalWidth === 256,
    );
    expect(await page.getByTestId('task-cost').textContent()).toBe('$0.01');
    expect(await page.locator('pre code').first().textContent()).toContain('"prompt": "a lighthouse"');

    const logRows = page.getByTestId('callback-log').locator('tbody tr');
    expect(await logRows.count()).toBe(1);
    const redeliver = page.getByRole('button', { name: 'Redeliver' });
    for (let n = 2; n <= 10; n++) {
      await redeliver.click();
      await page.waitForFunction(
        (count) => document.querySelectorAll('[data-testid=callback-log] tbody tr').length === count,
        n,
      );
    }
    expect(await redeliver.isDisabled()).toBe(true);
    expect(await page.locator('#redeliver-why').textContent()).toContain('The callback log holds 10 attempts');
    expect(await logRows.nth(9).textContent()).toContain('200');
    expect(rx.received({ path: '/manual', taskId: id })).toHaveLength(10);
    // The API agrees: an 11th is refused.
    expect((await api(gw, 'POST', `/v1/tasks/${id}/callbacks/redeliver`, { key })).status).toBe(409);
    await screenshots(page, '07-task');
  });

  test('a running task page updates live from its event stream, without polling; Cancel task refunds it', async () => {
    const id = await createTask(gw, key, {
      model: 'sandbox/image',
      input: { prompt: 'a live fox', width: 128, height: 128, delay_ms: 2500 },
    });
    const reads: string[] = [];
    const streams: string[] = [];
    const watch = (req: { url(): string }) => {
      const path = new URL(req.url()).pathname;
      if (path === `/v1/tasks/${id}`) reads.push(path);
      if (path === `/v1/tasks/${id}/events`) streams.push(path);
    };
    page.on('request', watch);
    await page.goto(`${gw.url}/dashboard/tasks/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Task' }).waitFor();
    await page.getByText('Processing… this page updates by itself.').waitFor();
    expect(await page.locator('.facts .badge').first().textContent()).toBe('processing');
    // The page is never reloaded: the output appears when the stream says the task completed.
    await page.waitForFunction(
      () => (document.querySelector('.media img') as HTMLImageElement | null)?.naturalWidth === 128,
    );
    expect(await page.locator('.facts .badge').first().textContent()).toBe('completed');
    page.off('request', watch);
    expect(streams).toHaveLength(1);
    // One read to draw the page; every change after it came over the stream.
    expect(reads).toHaveLength(1);

    const slow = await createTask(gw, key, { model: 'sandbox/image', input: { prompt: 'stop me', delay_ms: 60_000 } });
    const before = (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd;
    await page.goto(`${gw.url}/dashboard/tasks/${slow}`);
    await page.getByRole('button', { name: 'Cancel task' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel the task' }).click();
    await page.getByText('The task was cancelled and refunded in full').waitFor();
    expect(await page.locator('.facts .badge').first().textContent()).toBe('cancelled');
    expect(await page.getByTestId('task-cost').textContent()).toBe('$0.00');
    expect(await page.getByRole('button', { name: 'Cancel task' }).count()).toBe(0);
    const after = (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd;
    expect(Math.round((after - before) * 100)).toBe(1);
    expect((await api(gw, 'GET', `/v1/tasks/${slow}`, { key })).body.data.status).toBe('cancelled');
    await screenshots(page, '08-task-cancelled');
  });

  test('CSRF: a state-changing call with the cookie but without the token is refused (403)', async () => {
    const result = await page.evaluate(async () => {
      const post = (headers: Record<string, string>) =>
        fetch('/v1/account/webhook-signing', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ enabled: false }),
        });
      return {
        read: (await fetch('/v1/account')).status,
        noToken: (await post({})).status,
        badToken: (await post({ 'x-csrf-token': 'forged' })).status,
      };
    });
    expect(result).toEqual({ read: 200, noToken: 403, badToken: 403 });
    expect((await api(gw, 'GET', '/v1/account/webhook-signing', { key })).body.data.enabled).toBe(true);
  });

  test('overview: balance, e-mail, dates and the spend chart by category', async () => {
    await nav('Overview', 'Overview');
    await page.locator('.chart svg rect.series-image').first().waitFor();
    expect(await page.locator('.chart svg rect.series-llm').count()).toBeGreaterThan(0);
    expect(await page.locator('.chart svg rect.series-audio').count()).toBeGreaterThan(0);
    // The failed video task was refunded in full: no video spend.
    expect(await page.locator('.chart svg rect.series-video').count()).toBe(0);
    expect(await page.locator('.chart svg').getAttribute('aria-label')).toContain('in total');
    expect(await page.getByText('@example.com').count()).toBe(1);
    await screenshots(page, '02-overview');
  });

  test('models: grouped by category with prices and copyable ids', async () => {
    await nav('Models', 'Models');
    for (const name of ['Audio', 'Image', 'Video', 'LLM'])
      await page.getByRole('heading', { level: 2, name: new RegExp(`^${name} `) }).waitFor();
    const echo = page.getByRole('row', { name: /Echo/ });
    expect(await echo.textContent()).toContain('$1.00 input · $2.00 output per 1M tokens');
    expect(await echo.textContent()).toContain('32,768 tokens');
    await echo.getByRole('button', { name: 'Copy model id sandbox/echo' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('sandbox/echo');
    await screenshots(page, '08-models');
  });

  test('sign out ends the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to your dashboard' }).waitFor();
    expect(await page.evaluate(async () => (await fetch('/v1/account')).status)).toBe(401);
    expect((await context.cookies()).find((c) => c.name === 'gw_session')).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });
});
