import { ApiError, data } from '../api.ts';
import { fill, h } from '../dom.ts';
import { dateTime, isoTime, prettyJson, usd } from '../format.ts';
import { mediaOutput } from '../media-output.ts';
import { errorNotice, errorText, infoNotice } from '../notice.ts';
import { httpBadge, statusBadge } from '../status-badge.ts';
import type { CallbackEntry, Task } from '../types.ts';
import { pause, type ViewContext } from '../view.ts';
import { confirmDialog } from '../confirm-dialog.ts';
import { followTask } from '../task-stream.ts';

/** The cap on a task's callback log (docs/api-contract.md). The API enforces it (409); the page only explains it. */
const CALLBACK_LOG_CAP = 10;
/** After the end, the first delivery is awaited by polling: it is logged after the task's last event. */
const POLL_MS = 1000;

const jsonBlock = (value: unknown, label: string) =>
  h('pre', { class: 'code', tabindex: '0', 'aria-label': label }, h('code', null, prettyJson(value)));

function summary(task: Task): HTMLElement {
  const row = (term: string, value: Node | string) => [h('dt', null, term), h('dd', null, value)];
  return h(
    'dl',
    { class: 'facts' },
    row('Status', statusBadge(task.status)),
    row('Model', h('span', { class: 'mono' }, task.model)),
    row('Category', task.category ?? '—'),
    row('Cost', h('span', { 'data-testid': 'task-cost' }, usd(task.cost))),
    row('Created', h('time', { datetime: isoTime(task.created_at) }, dateTime(task.created_at))),
    task.error_message ? row('Error', h('span', { class: 'error-text' }, task.error_message)) : null,
  );
}

function output(task: Task): Array<Node> {
  if (task.status === 'processing')
    return [
      h(
        'p',
        { class: 'muted', role: 'status' },
        h('span', { class: 'spinner', 'aria-hidden': 'true' }),
        'Processing… this page updates by itself.',
      ),
    ];
  if (task.status === 'failed')
    return [
      h('p', { class: 'error-text' }, task.error_message ?? 'The task failed.'),
      h('p', { class: 'muted' }, 'A failed task is refunded in full.'),
    ];
  if (task.status === 'cancelled')
    return [h('p', { class: 'muted' }, 'The task was cancelled and refunded in full; it made no output.')];
  if (!task.output) return [h('p', { class: 'muted' }, 'No output.')];
  return [
    mediaOutput(task.output, task.category ?? 'task'),
    h('details', null, h('summary', null, 'Output as JSON'), jsonBlock(task.output, 'Output JSON')),
  ];
}

function callbackLog(entries: CallbackEntry[]): HTMLElement {
  if (!entries.length) return h('p', { class: 'muted' }, 'No delivery attempts yet.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'stack', 'data-testid': 'callback-log' },
      h(
        'caption',
        { class: 'visually-hidden' },
        `Callback log, ${entries.length} of at most ${CALLBACK_LOG_CAP} attempts`,
      ),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, '#'),
          h('th', { scope: 'col' }, 'Time'),
          h('th', { scope: 'col' }, 'Status'),
          h('th', { scope: 'col' }, 'Text'),
        ),
      ),
      h(
        'tbody',
        null,
        entries.map((entry, i) =>
          h(
            'tr',
            null,
            h('td', { 'data-label': '#' }, String(i + 1)),
            h('td', { 'data-label': 'Time' }, h('time', { datetime: isoTime(entry.sent_at) }, dateTime(entry.sent_at))),
            h('td', { 'data-label': 'Status' }, httpBadge(entry.status)),
            h('td', { 'data-label': 'Text', class: 'break' }, entry.status_text),
          ),
        ),
      ),
    ),
  );
}

/** Why Redeliver cannot be used now, or null when it can. */
function redeliverBlocked(task: Task): string | null {
  if (!task.callback_url) return 'This task was created without a callback_url, so there is nothing to deliver.';
  if (task.status === 'processing')
    return 'The callback is sent when the task finishes; redelivery is possible after that.';
  if ((task.callback_result?.length ?? 0) >= CALLBACK_LOG_CAP) {
    return `The callback log holds ${CALLBACK_LOG_CAP} attempts, the most one task can have: no more deliveries can be made.`;
  }
  return null;
}

/** One task (GET /v1/tasks/{id}): input, output with players, cost, the callback log and Redeliver. */
export async function taskDetailView(ctx: ViewContext): Promise<void> {
  const id = ctx.params.id ?? '';
  ctx.heading('Task', h('span', { class: 'mono break' }, id), ' · ', h('a', { href: '/dashboard/tasks' }, 'All tasks'));
  const load = () => data<Task>('GET', `/v1/tasks/${encodeURIComponent(id)}`, { signal: ctx.signal });
  let task = await load();

  const summaryBox = h('section', { class: 'card', 'aria-labelledby': 'sum-title' });
  const inputBox = h(
    'section',
    { class: 'card', 'aria-labelledby': 'in-title' },
    h('h2', { id: 'in-title' }, 'Input'),
    jsonBlock(task.input ?? {}, 'Input JSON'),
  );
  const outputBody = h('div');
  const outputBox = h(
    'section',
    { class: 'card', 'aria-labelledby': 'out-title' },
    h('h2', { id: 'out-title' }, 'Output'),
    outputBody,
  );
  const logBody = h('div');
  const why = h('p', { id: 'redeliver-why', class: 'help' });
  const result = h('div', { class: 'messages' });
  const redeliver = h(
    'button',
    { type: 'button', class: 'button primary', 'aria-describedby': 'redeliver-why' },
    'Redeliver',
  );
  const target = h('p', { class: 'break' });
  const callbacks = h(
    'section',
    { class: 'card', 'aria-labelledby': 'cb-title' },
    h('h2', { id: 'cb-title' }, 'Callback'),
    target,
    logBody,
    h('div', { class: 'row' }, redeliver),
    why,
    result,
  );

  const cancelResult = h('div', { class: 'messages' });
  const cancel = h('button', { type: 'button', class: 'button danger' }, 'Cancel task');
  cancel.addEventListener('click', async () => {
    const sure = await confirmDialog({
      title: 'Cancel this task?',
      body: 'It stops here (and upstream where the provider allows it), and its cost is refunded in full.',
      confirm: 'Cancel the task',
    });
    if (!sure) return;
    cancel.disabled = true;
    cancelResult.replaceChildren();
    try {
      task = await data<Task>('POST', `/v1/tasks/${encodeURIComponent(id)}/cancel`);
    } catch (err) {
      cancelResult.append(
        errorNotice(err instanceof ApiError && err.status === 409 ? `Not cancelled: ${err.message}` : errorText(err)),
      );
      task = await load();
    }
    render();
  });

  const render = () => {
    fill(
      summaryBox,
      h('h2', { id: 'sum-title' }, 'Summary'),
      summary(task),
      task.status === 'processing' ? h('div', { class: 'row' }, cancel) : null,
      cancelResult,
    );
    fill(outputBody, ...output(task));
    fill(
      target,
      task.callback_url ? ['Sent to ', h('span', { class: 'mono' }, task.callback_url)] : 'No callback_url was given.',
    );
    fill(logBody, task.callback_url ? callbackLog(task.callback_result ?? []) : null);
    const blocked = redeliverBlocked(task);
    redeliver.disabled = blocked !== null;
    why.textContent =
      blocked ?? 'Sends the callback once more, signed afresh if signing is on; the attempt is added to the log.';
  };

  redeliver.addEventListener('click', async () => {
    redeliver.disabled = true;
    result.replaceChildren();
    try {
      const entry = await data<CallbackEntry>('POST', `/v1/tasks/${encodeURIComponent(id)}/callbacks/redeliver`);
      result.append(
        infoNotice(`Attempt made: ${entry.status === 0 ? 'no answer' : `HTTP ${entry.status}`} — ${entry.status_text}`),
      );
    } catch (err) {
      result.append(
        errorNotice(err instanceof ApiError && err.status === 409 ? `Refused: ${err.message}` : errorText(err)),
      );
    }
    task = await load();
    render();
    // Keep keyboard users where they were; once disabled, the explanation takes the focus's place.
    if (redeliver.disabled) {
      why.setAttribute('tabindex', '-1');
      why.focus();
    } else {
      redeliver.focus();
    }
  });

  render();
  ctx.main.append(summaryBox, inputBox, outputBox, callbacks);

  // Follow a running task live until it ends, then briefly its first delivery.
  if (task.status === 'processing') {
    await followTask(id, ctx.signal, (next) => {
      task = next;
      render();
    });
    if (ctx.signal.aborted) return;
    // The stream could not be opened or kept (the session ended): show the task as it is now.
    if (task.status === 'processing') {
      task = await load();
      render();
    }
  }
  let afterFinish = 0;
  while (task.status !== 'processing' && task.callback_url && !task.callback_result?.length && afterFinish++ < 15) {
    if (!(await pause(POLL_MS, ctx.signal))) return;
    task = await load();
    render();
  }
}
