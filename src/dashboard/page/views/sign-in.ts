import { h } from '../dom.ts';
import { errorNotice, errorText } from '../notice.ts';
import { signIn } from '../session.ts';
import type { ViewContext } from '../view.ts';

/** Where to go after signing in: only a dashboard path, never another site. */
function nextPath(query: URLSearchParams): string {
  const next = query.get('next') ?? '';
  return /^\/dashboard(\/[^/]|\/?$|\?)/.test(next) && !next.startsWith('/dashboard/sign-in') ? next : '/dashboard';
}

export function signInView(ctx: ViewContext): void {
  document.title = 'Sign in · Gateway dashboard';
  const input = h('input', {
    id: 'api-key',
    name: 'api_key',
    type: 'password',
    class: 'mono',
    required: true,
    autocomplete: 'current-password',
    spellcheck: 'false',
    'aria-describedby': 'api-key-help',
  });
  const errors = h('div', { class: 'form-errors' });
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('p', { class: 'brand big' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, '◆'), 'Gateway'),
    h('h1', { id: 'sign-in-title', tabindex: '-1' }, 'Sign in to your dashboard'),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'api-key' }, 'API key'),
      input,
      h(
        'p',
        { id: 'api-key-help', class: 'help' },
        'The key printed at first start, or the one you created with the admin API. It is sent once to open a session and is not kept in the browser.',
      ),
    ),
    errors,
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    errors.replaceChildren();
    try {
      await signIn(input.value.trim());
      input.value = '';
      ctx.navigate(nextPath(ctx.query), { replace: true });
    } catch (err) {
      errors.append(errorNotice(errorText(err)));
      input.focus();
    } finally {
      submit.disabled = false;
    }
  });
  ctx.main.append(h('div', { class: 'center' }, form));
  input.focus();
}
