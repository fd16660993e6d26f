import { h } from './dom.ts';

/**
 * Asks before an action that cannot be undone, with the native <dialog>: focus moves into it,
 * Escape cancels, and focus returns to the button that opened it.
 */
export function confirmDialog(opts: { title: string; body: string; confirm: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const opener = document.activeElement as HTMLElement | null;
    const titleId = `dialog-title-${Date.now()}`;
    const cancel = h('button', { type: 'button', class: 'button secondary', autofocus: true }, 'Cancel');
    const ok = h('button', { type: 'button', class: 'button danger' }, opts.confirm);
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': titleId },
      h('h2', { id: titleId }, opts.title),
      h('p', null, opts.body),
      h('div', { class: 'row end' }, cancel, ok),
    );
    const close = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      opener?.focus();
      resolve(answer);
    };
    cancel.addEventListener('click', () => close(false));
    ok.addEventListener('click', () => close(true));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      close(false);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
