import { data } from '../api.ts';
import { confirmDialog } from '../confirm-dialog.ts';
import { copyButton, copyField } from '../copy-button.ts';
import { fill, h } from '../dom.ts';
import { errorNotice, errorText, infoNotice } from '../notice.ts';
import type { Signing } from '../types.ts';
import type { ViewContext } from '../view.ts';

/** The receiver side of the webhook signature (docs/api-contract.md, "Webhooks"), ready to paste. */
const VERIFY_SAMPLE = `import { createHmac, timingSafeEqual } from 'node:crypto';

const SECRET = process.env.WEBHOOK_SECRET!; // the signing secret shown in the dashboard

/** True when the delivery was signed with SECRET. rawBody: the body exactly as received. */
export function verifyWebhook(rawBody: string, headers: Headers): boolean {
  const timestamp = headers.get('x-webhook-timestamp'); // Unix seconds
  const signature = headers.get('x-webhook-signature'); // lowercase hex HMAC-SHA256
  if (!timestamp || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  // Optional: the gateway enforces no freshness window; choose your own against replays.
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = createHmac('sha256', SECRET).update(\`\${timestamp}.\${rawBody}\`).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

// A receiver (Bun; any Fetch-API server works the same): read the raw body BEFORE parsing it.
Bun.serve({
  port: 3000,
  async fetch(req) {
    const rawBody = await req.text();
    if (!verifyWebhook(rawBody, req.headers)) return new Response('bad signature', { status: 401 });
    const event = JSON.parse(rawBody); // { task_id, status, data } or { task_id, status, error_message }
    // The same callback may arrive more than once: deduplicate on event.task_id.
    return new Response('ok'); // answer 2xx within 5 s
  },
});
`;

/** Webhook signing (GET/POST /v1/account/webhook-signing, POST …/reset) and how to verify it. */
export async function webhooksView(ctx: ViewContext): Promise<void> {
  ctx.heading(
    'Webhooks',
    'When a task has a ',
    h('code', null, 'callback_url'),
    ', the gateway POSTs its result there once it finishes. Sign the deliveries so your receiver can tell they came from this gateway.',
  );
  const state = h('section', { class: 'card', 'aria-labelledby': 'signing-title' });
  const messages = h('div', { class: 'messages' });

  const render = (signing: Signing) => {
    const toggle = h('input', {
      id: 'signing-enabled',
      type: 'checkbox',
      role: 'switch',
      checked: signing.enabled,
      'aria-describedby': 'signing-help',
    });
    toggle.addEventListener('change', () =>
      change(
        () => data<Signing>('POST', '/v1/account/webhook-signing', { body: { enabled: toggle.checked } }),
        toggle.checked ? 'Signing is on.' : 'Signing is off.',
      ),
    );
    const reset = h('button', { type: 'button', class: 'button danger', disabled: !signing.secret }, 'Reset secret…');
    reset.addEventListener('click', async () => {
      const sure = await confirmDialog({
        title: 'Reset the signing secret?',
        body: 'A new secret is made and the current one stops verifying at once: deliveries from now on are signed with the new one only.',
        confirm: 'Reset secret',
      });
      if (sure)
        await change(
          () => data<Signing>('POST', '/v1/account/webhook-signing/reset'),
          'A new secret was made; update your receivers.',
        );
    });
    fill(
      state,
      h('h2', { id: 'signing-title' }, 'Signing'),
      h(
        'div',
        { class: 'switch-row' },
        toggle,
        h('label', { for: 'signing-enabled' }, 'Sign webhook deliveries'),
        h(
          'span',
          { class: `badge ${signing.enabled ? 'ok' : 'neutral'}`, 'data-testid': 'signing-state' },
          signing.enabled ? 'On' : 'Off',
        ),
      ),
      h(
        'p',
        { id: 'signing-help', class: 'help' },
        'With signing on, every delivery (retries and manual redeliveries too, each signed afresh) carries x-webhook-timestamp and x-webhook-signature. Turning it off keeps the secret.',
      ),
      signing.secret
        ? copyField('Signing secret', signing.secret, { id: 'signing-secret' })
        : h('p', { class: 'muted' }, 'Turn signing on to create your secret.'),
      signing.standard_secret
        ? copyField('Standard Webhooks secret', signing.standard_secret, {
            id: 'standard-secret',
          })
        : null,
      h('div', { class: 'row' }, reset),
    );
  };

  const change = async (action: () => Promise<Signing>, done: string) => {
    messages.replaceChildren();
    state.setAttribute('aria-busy', 'true');
    try {
      render(await action());
      messages.append(infoNotice(done));
    } catch (err) {
      messages.append(errorNotice(errorText(err)));
      // Show the state the server really has, whatever the failed call left on screen.
      await data<Signing>('GET', '/v1/account/webhook-signing').then(render, () => undefined);
    } finally {
      state.removeAttribute('aria-busy');
    }
  };

  render(await data<Signing>('GET', '/v1/account/webhook-signing', { signal: ctx.signal }));
  const code = h(
    'pre',
    { class: 'code', tabindex: '0', 'aria-label': 'TypeScript verification sample' },
    h('code', null, VERIFY_SAMPLE),
  );
  ctx.main.append(
    state,
    messages,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'verify-title' },
      h('h2', { id: 'verify-title' }, 'Verifying a delivery'),
      h(
        'ol',
        { class: 'steps' },
        h(
          'li',
          null,
          'Read the headers ',
          h('code', null, 'x-webhook-timestamp'),
          ' (Unix seconds) and ',
          h('code', null, 'x-webhook-signature'),
          ' (64 lowercase hex characters).',
        ),
        h(
          'li',
          null,
          'Take the request body as raw bytes, before any JSON parsing, and form the text ',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the page shows the template itself
          h('code', null, '${timestamp}.${rawBody}'),
          ' — the timestamp, a period, the body.',
        ),
        h('li', null, 'Compute HMAC-SHA256 of that text keyed with your signing secret, as lowercase hex.'),
        h(
          'li',
          null,
          'Compare it with the signature in constant time; on a mismatch answer 401 and ignore the delivery.',
        ),
        h(
          'li',
          null,
          'Optionally refuse old timestamps: the gateway enforces no window, so choose your own (5 minutes is common).',
        ),
      ),
      h(
        'div',
        { class: 'code-head' },
        h('h3', null, 'TypeScript (Node.js or Bun)'),
        copyButton(() => VERIFY_SAMPLE, 'Copy the TypeScript sample'),
      ),
      code,
    ),
  );
}
