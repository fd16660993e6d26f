import { data } from '../api.ts';
import { confirmDialog } from '../confirm-dialog.ts';
import { copyField } from '../copy-button.ts';
import { h } from '../dom.ts';
import { errorNotice, errorText, infoNotice } from '../notice.ts';
import { signIn } from '../session.ts';
import type { ViewContext } from '../view.ts';

/**
 * Regenerating the key (POST /v1/account/api-key/regenerate). The old key stops at once — and so
 * does any session made from it, this one included; the page continues its own by signing in
 * with the new key it was just handed, so the user stays signed in and the old session id is
 * retired on the way.
 */
export function apiKeyView(ctx: ViewContext): void {
  ctx.heading(
    'API key',
    'Every request to the gateway carries your key as ',
    h('code', null, 'Authorization: Bearer <key>'),
    '. Keys are stored only as a hash, so a lost key cannot be shown again: regenerate it instead. This page regenerates your account\u2019s ',
    h('code', null, 'default'),
    ' key (it keeps its settings and spend); the others are on the ',
    h('a', { href: '/dashboard/keys' }, 'Keys'),
    ' page.',
  );
  const result = h('div', { class: 'key-result', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', class: 'button danger' }, 'Regenerate key…');
  button.addEventListener('click', async () => {
    const sure = await confirmDialog({
      title: 'Regenerate the API key?',
      body: 'The current key stops working immediately, for every application that uses it. You will see the new key once.',
      confirm: 'Regenerate',
    });
    if (!sure) return;
    button.disabled = true;
    result.replaceChildren();
    try {
      const { api_key } = await data<{ api_key: string }>('POST', '/v1/account/api-key/regenerate');
      result.append(
        h(
          'div',
          { class: 'card highlight' },
          h('h2', { tabindex: '-1', id: 'new-key-title' }, 'Your new key'),
          h(
            'p',
            { class: 'notice warn' },
            'Copy it now and store it somewhere safe: it is shown only this once. The previous key no longer works.',
          ),
          copyField('New API key', api_key, { id: 'new-api-key' }),
        ),
      );
      (result.querySelector('#new-key-title') as HTMLElement).focus();
      await signIn(api_key).then(
        () => result.append(infoNotice('You are still signed in, now with the new key.')),
        (err: unknown) =>
          result.append(
            errorNotice(
              `The key was regenerated, but the session could not continue (${errorText(err)}): copy the key, then sign in with it.`,
            ),
          ),
      );
    } catch (err) {
      result.append(errorNotice(errorText(err)));
    } finally {
      button.disabled = false;
    }
  });
  ctx.main.append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'regen-title' },
      h('h2', { id: 'regen-title' }, 'Regenerate'),
      h(
        'p',
        null,
        'Do this when the key may have leaked. Requests made with the old key are refused (401) on every gateway instance from the moment the new one is issued. Sessions signed in with the old key elsewhere end too; this one continues.',
      ),
      button,
    ),
    result,
  );
}
