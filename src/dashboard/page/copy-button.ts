import { h } from './dom.ts';

/**
 * A "Copy" button for a value shown beside it. Success is announced to screen readers through a
 * polite live region; where the Clipboard API is unavailable the value is selected instead, so
 * Ctrl+C finishes the job.
 */
export function copyButton(
  value: () => string,
  label: string,
  select?: HTMLInputElement | HTMLTextAreaElement,
): HTMLElement {
  const status = h('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', class: 'button secondary small', 'aria-label': label }, 'Copy');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value());
      status.textContent = 'Copied';
    } catch {
      select?.focus();
      select?.select();
      status.textContent = 'Selected: press Ctrl+C to copy';
    }
    setTimeout(() => (status.textContent = ''), 2500);
  });
  return h('span', { class: 'copy' }, button, status);
}

/** A read-only monospace field holding a secret or id, with its copy button. */
export function copyField(
  labelText: string,
  value: string,
  opts: { id: string; secret?: boolean } = { id: 'copy-field' },
): HTMLElement {
  const input = h('input', {
    id: opts.id,
    class: 'mono',
    type: 'text',
    readonly: true,
    value,
    spellcheck: 'false',
    autocomplete: 'off',
  });
  return h(
    'div',
    { class: 'field copy-field' },
    h('label', { for: opts.id }, labelText),
    h(
      'div',
      { class: 'row' },
      input,
      copyButton(() => input.value, `Copy ${labelText.charAt(0).toLowerCase()}${labelText.slice(1)}`, input),
    ),
  );
}
