import { h, uid } from '../dom.ts';
import type { ApiKey } from '../types.ts';

/** The settings a key form sends (POST or PATCH /v1/keys); `null` clears a setting. */
export type KeySettingsBody = Record<string, string | number | string[] | null>;

export interface KeyForm {
  element: HTMLElement;
  /** The body to send, or a message naming the field that is not a number. */
  read(): { body: KeySettingsBody } | { error: string };
}

const numberOrNull = (input: HTMLInputElement, name: string): number | null | string => {
  const text = input.value.trim();
  if (text === '') return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : `${name}: must be a number`;
};

/**
 * The fields of a key (docs/keys.md): name, budget and its period, allowed models (comma list),
 * rpm, tpm, expiry date (UTC). Prefilled from `key` when editing. The API validates the values
 * and answers a 422 naming the field, shown as it is.
 */
export function keyForm(key?: ApiKey): KeyForm {
  const field = (label: string, input: HTMLElement, help?: string) => {
    const id = uid('key-field');
    input.id = id;
    const helpId = help ? `${id}-help` : undefined;
    if (helpId) input.setAttribute('aria-describedby', helpId);
    return h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      input,
      help ? h('p', { id: helpId, class: 'help' }, help) : null,
    );
  };
  const name = h('input', { type: 'text', required: true, maxlength: 100, value: key?.name ?? '' });
  const budget = h('input', { type: 'text', inputmode: 'decimal', value: key?.budget_usd ?? '' });
  const period = h(
    'select',
    null,
    [
      ['', 'Lifetime'],
      ['day', 'Per day (UTC)'],
      ['week', 'Per week (UTC, from Monday)'],
      ['month', 'Per month (UTC)'],
    ].map(([value, label]) => h('option', { value, selected: (key?.budget_period ?? '') === value }, label)),
  );
  const models = h('input', { type: 'text', value: key?.models?.join(', ') ?? '' });
  const rpm = h('input', { type: 'text', inputmode: 'numeric', value: key?.rpm ?? '' });
  const tpm = h('input', { type: 'text', inputmode: 'numeric', value: key?.tpm ?? '' });
  const expires = h('input', {
    type: 'date',
    value: key?.expires_at ? new Date(key.expires_at * 1000).toISOString().slice(0, 10) : '',
  });
  const element = h(
    'div',
    { class: 'key-form' },
    field('Name', name),
    field('Budget (USD)', budget, 'Empty: no budget of its own (the account balance still applies).'),
    field('Budget period', period),
    field('Allowed models', models, 'Comma-separated model ids, provider slugs or slug/*. Empty: every model.'),
    field('Requests per minute', rpm, 'Empty: no limit of its own.'),
    field('Tokens per minute', tpm, 'Input + output tokens of LLM calls. Empty: no limit.'),
    field('Expires on (UTC)', expires, 'Empty: never.'),
  );
  return {
    element,
    read() {
      const values = {
        budget_usd: numberOrNull(budget, 'budget_usd'),
        rpm: numberOrNull(rpm, 'rpm'),
        tpm: numberOrNull(tpm, 'tpm'),
      };
      for (const value of Object.values(values)) if (typeof value === 'string') return { error: value };
      const list = models.value
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean);
      return {
        body: {
          name: name.value,
          ...(values as Record<string, number | null>),
          budget_period: period.value || null,
          models: list.length ? list : null,
          expires_at: expires.value ? Math.floor(Date.parse(`${expires.value}T00:00:00Z`) / 1000) : null,
        },
      };
    },
  };
}
