import { h } from './dom.ts';

const TONE: Record<string, string> = { completed: 'ok', failed: 'bad', processing: 'busy', cancelled: 'neutral' };

/** A task status as a word in a coloured pill (the word carries the meaning, not the colour). */
export const statusBadge = (status: string) => h('span', { class: `badge ${TONE[status] ?? 'neutral'}` }, status);

/** An HTTP status of a callback attempt: 2xx is a delivery, 0 means no answer at all. */
export const httpBadge = (status: number) =>
  h(
    'span',
    { class: `badge ${status >= 200 && status < 300 ? 'ok' : 'bad'}` },
    status === 0 ? 'no answer' : String(status),
  );
