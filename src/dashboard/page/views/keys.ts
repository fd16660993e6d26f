import { data } from '../api.ts';
import { confirmDialog } from '../confirm-dialog.ts';
import { copyField } from '../copy-button.ts';
import { fill, h } from '../dom.ts';
import { dateTime, integer, usd } from '../format.ts';
import { errorNotice, errorText, infoNotice } from '../notice.ts';
import type { ApiKey } from '../types.ts';
import type { ViewContext } from '../view.ts';
import { keyForm } from './key-form.ts';

const PERIOD: Record<string, string> = { day: 'today', week: 'this week', month: 'this month' };

function spendText(key: ApiKey): string {
  const spent = usd(key.spend_usd);
  const period = key.budget_period ? PERIOD[key.budget_period] : 'in total';
  return key.budget_usd === null ? `${spent} ${period}` : `${spent} of ${usd(key.budget_usd)} ${period}`;
}

function limitsText(key: ApiKey): string {
  const parts = [
    key.models ? `models: ${key.models.join(', ')}` : 'every model',
    key.rpm === null ? null : `${integer(key.rpm)} rpm`,
    key.tpm === null ? null : `${integer(key.tpm)} tpm`,
  ];
  return parts.filter(Boolean).join(' · ');
}

/**
 * The account's API keys (GET/POST /v1/keys, PATCH/DELETE /v1/keys/{id}): create one (its key is
 * shown once), see each key's spend this period and limits, edit its settings, revoke it.
 */
export async function keysView(ctx: ViewContext): Promise<void> {
  ctx.heading(
    'Keys',
    'One key per application, developer or environment, each with its own budget, allowed models and rate limits.',
  );
  const status = h('div', { 'aria-live': 'polite' });
  const list = h('div', { class: 'table-wrap' });

  const load = async () => {
    const keys = await data<ApiKey[]>('GET', '/v1/keys', { signal: ctx.signal });
    fill(list, keysTable(keys));
  };

  const keysTable = (keys: ApiKey[]) =>
    h(
      'table',
      { class: 'stack', 'aria-label': 'API keys', 'data-testid': 'keys-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ['Name', 'Key', 'Spend', 'Limits', 'Last used', 'Expires', 'Actions'].map((c) =>
            h('th', { scope: 'col' }, c),
          ),
        ),
      ),
      h(
        'tbody',
        null,
        keys.map((key) => {
          const edit = h('button', { type: 'button', class: 'button secondary small' }, `Edit ${key.name}`);
          const revoke = h('button', { type: 'button', class: 'button danger small' }, `Revoke ${key.name}`);
          const row = h(
            'tr',
            { 'data-key-id': key.id },
            h('th', { scope: 'row', 'data-label': 'Name' }, key.name),
            h('td', { 'data-label': 'Key' }, h('code', null, `${key.key_prefix}…`)),
            h('td', { 'data-label': 'Spend', 'data-testid': `spend-${key.id}` }, spendText(key)),
            h('td', { 'data-label': 'Limits' }, limitsText(key)),
            h('td', { 'data-label': 'Last used' }, key.last_used_at ? dateTime(key.last_used_at) : 'never'),
            h('td', { 'data-label': 'Expires' }, key.expires_at ? dateTime(key.expires_at) : 'never'),
            h('td', { 'data-label': 'Actions' }, edit, ' ', revoke),
          );
          edit.addEventListener('click', () => openEditor(key));
          revoke.addEventListener('click', async () => {
            const sure = await confirmDialog({
              title: `Revoke the key “${key.name}”?`,
              body: 'Requests made with it are refused at once, on every gateway instance. This cannot be undone.',
              confirm: 'Revoke',
            });
            if (!sure) return;
            try {
              await data('DELETE', `/v1/keys/${key.id}`);
              await load();
              fill(status, infoNotice(`The key “${key.name}” was revoked.`));
            } catch (err) {
              fill(status, errorNotice(errorText(err)));
            }
          });
          return row;
        }),
      ),
    );

  const editor = h('div');
  const openEditor = (key: ApiKey) => {
    const form = keyForm(key);
    const save = h('button', { type: 'submit', class: 'button' }, 'Save changes');
    const cancel = h('button', { type: 'button', class: 'button secondary' }, 'Cancel');
    const el = h(
      'form',
      { class: 'card', 'aria-labelledby': 'edit-key-title' },
      h('h2', { id: 'edit-key-title', tabindex: '-1' }, `Edit “${key.name}”`),
      form.element,
      save,
      ' ',
      cancel,
    );
    cancel.addEventListener('click', () => editor.replaceChildren());
    el.addEventListener('submit', async (event) => {
      event.preventDefault();
      const read = form.read();
      if ('error' in read) return fill(status, errorNotice(read.error));
      try {
        await data('PATCH', `/v1/keys/${key.id}`, { body: read.body });
        editor.replaceChildren();
        await load();
        fill(status, infoNotice(`The key “${key.name}” was saved.`));
      } catch (err) {
        fill(status, errorNotice(errorText(err)));
      }
    });
    editor.replaceChildren(el);
    (el.querySelector('#edit-key-title') as HTMLElement).focus();
  };

  const createForm = keyForm();
  const created = h('div', { 'aria-live': 'polite' });
  const create = h(
    'form',
    { class: 'card', 'aria-labelledby': 'create-key-title' },
    h('h2', { id: 'create-key-title' }, 'Create a key'),
    createForm.element,
    h('button', { type: 'submit', class: 'button' }, 'Create key'),
  );
  create.addEventListener('submit', async (event) => {
    event.preventDefault();
    const read = createForm.read();
    if ('error' in read) return fill(created, errorNotice(read.error));
    // A new key sends only what was filled in.
    const body = Object.fromEntries(Object.entries(read.body).filter(([, value]) => value !== null));
    try {
      const key = await data<ApiKey & { key: string }>('POST', '/v1/keys', { body });
      fill(
        created,
        h(
          'div',
          { class: 'card highlight' },
          h('h2', { tabindex: '-1', id: 'created-key-title' }, `Your new key “${key.name}”`),
          h('p', { class: 'notice warn' }, 'Copy it now: it is shown only this once.'),
          copyField('New API key', key.key, { id: 'created-key' }),
        ),
      );
      (created.querySelector('#created-key-title') as HTMLElement).focus();
      create.reset();
      await load();
    } catch (err) {
      fill(created, errorNotice(errorText(err)));
    }
  });

  ctx.main.append(
    status,
    h('section', { class: 'card', 'aria-labelledby': 'keys-title' }, h('h2', { id: 'keys-title' }, 'Your keys'), list),
    editor,
    create,
    created,
  );
  await load();
}
