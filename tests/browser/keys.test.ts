import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { DESKTOP, launchChromium, screenshots } from './chromium.ts';

/**
 * The dashboard's Keys page in Chromium (docs/keys.md), used as a person would: create a key (shown
 * once) and use it, see its spend against its budget, edit its limits (the API then enforces
 * them), revoke it; the overview shows spend per key and per model.
 */
const embedded = MODES.find((m) => m.name === 'embedded') as (typeof MODES)[number];

describe('dashboard Keys page in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let gw: GatewayProcess;
  let owner: string;
  let created = '';
  const pageErrors: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    gw = await startGateway({ ...(await embedded.env('dashkeys')), RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key: owner } = await createAccount(gw, uniqueEmail('dashkeys'), 10));
    const context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    await page.goto(`${gw.url}/dashboard/keys`);
    await page.getByLabel('API key').fill(owner);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  test('create a key with a budget: shown once, it works, its spend shows against the budget', async () => {
    const table = page.getByTestId('keys-table');
    await table.getByRole('rowheader', { name: 'default' }).waitFor();
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Name').fill('ci-pipeline');
    await form.getByLabel('Budget (USD)').fill('0.05');
    await form.getByLabel('Budget period').selectOption('month');
    await form.getByRole('button', { name: 'Create key' }).click();
    created = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
    expect(created).toMatch(/^gw_/);
    await screenshots(page, '20-keys-created');
    // The new key works, and what it spends shows on the page.
    const task = await api(gw, 'POST', '/v1/tasks', {
      key: created,
      body: { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 0 } },
    });
    expect(task.status).toBe(200);
    await page.reload();
    const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'ci-pipeline' }) });
    await row.waitFor();
    expect(await row.textContent()).toContain('$0.01 of $0.05 this month');
    expect(await row.textContent()).not.toContain(created);
  });

  test('edit limits: the allow-list is enforced at once; revoke: the key is refused', async () => {
    const table = page.getByTestId('keys-table');
    await page.getByRole('button', { name: 'Edit ci-pipeline' }).click();
    const form = page.getByRole('form', { name: 'Edit “ci-pipeline”' });
    await form.getByLabel('Allowed models').fill('sandbox/echo');
    await form.getByLabel('Requests per minute').fill('lots');
    await form.getByRole('button', { name: 'Save changes' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('rpm');
    await form.getByLabel('Requests per minute').fill('120');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('The key “ci-pipeline” was saved.').waitFor();
    const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'ci-pipeline' }) });
    expect(await row.textContent()).toContain('models: sandbox/echo · 120 rpm');
    const image = { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 0 } };
    expect((await api(gw, 'POST', '/v1/tasks', { key: created, body: image })).status).toBe(403);
    await screenshots(page, '21-keys-edited');

    // A key made for the check below, through the API, then revoked on the page.
    const made = await api(gw, 'POST', '/v1/keys', { key: owner, body: { name: 'temporary' } });
    expect((await api(gw, 'GET', '/v1/account', { key: made.body.data.key })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Revoke temporary' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('The key “temporary” was revoked.').waitFor();
    expect(await table.getByRole('rowheader', { name: 'temporary' }).count()).toBe(0);
    expect((await api(gw, 'GET', '/v1/account', { key: made.body.data.key })).status).toBe(401);
  });

  test('the overview shows spend per key and per model', async () => {
    await page
      .getByRole('navigation', { name: 'Dashboard' })
      .getByRole('link', { name: 'Overview', exact: true })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const byKey = page.getByTestId('spend-by-key');
    await byKey.waitFor();
    expect(await byKey.getByRole('row').filter({ hasText: 'ci-pipeline' }).textContent()).toContain('$0.01');
    expect(
      await page.getByTestId('spend-by-model').getByRole('row').filter({ hasText: 'sandbox/image' }).textContent(),
    ).toContain('$0.01');
    await screenshots(page, '22-overview-breakdown');
    expect(pageErrors).toEqual([]);
  });
});
