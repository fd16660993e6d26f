import { call, data, errorOf } from '../api.ts';
import { catalog } from '../catalog.ts';
import { fill, h } from '../dom.ts';
import { usd } from '../format.ts';
import { mediaOutput } from '../media-output.ts';
import { errorNotice, errorText } from '../notice.ts';
import { sseData } from '../sse-data.ts';
import { statusBadge } from '../status-badge.ts';
import type { Category, Model, Task } from '../types.ts';
import type { ViewContext } from '../view.ts';
import { followTask } from '../task-stream.ts';

/** Starting inputs a newcomer can run as they are; the API validates whatever is sent. */
type MediaCategory = Exclude<Category, 'llm' | 'embedding'>;
const EXAMPLE_INPUT: Record<MediaCategory, object> = {
  image: { prompt: 'a red fox in the snow', width: 512, height: 512 },
  video: { prompt: 'waves rolling onto a beach at sunset', duration: 5 },
  audio: { text: 'Hello from the generation gateway.' },
};
/** How often the seconds of a running task are redrawn. */
const TICK_MS = 1000;

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
}

function modelSelect(id: string, models: Model[]): HTMLSelectElement {
  const byCategory = new Map<string, Model[]>();
  for (const m of models) byCategory.set(m.category, [...(byCategory.get(m.category) ?? []), m]);
  return h(
    'select',
    { id, name: 'model' },
    [...byCategory].map(([category, list]) =>
      h(
        'optgroup',
        { label: category },
        list.map((m) => h('option', { value: m.id }, `${m.display_name} — ${m.id}`)),
      ),
    ),
  );
}

/** POST /v1/chat/completions with stream: true, each delta appended as it arrives. */
function chatPanel(ctx: ViewContext, llms: Model[]): HTMLElement {
  const model = modelSelect('chat-model', llms);
  const prompt = h(
    'textarea',
    { id: 'chat-prompt', name: 'prompt', rows: 3, required: true },
    'Hello gateway, stream me something',
  );
  const send = h('button', { type: 'submit', class: 'button primary' }, 'Send');
  const stop = h('button', { type: 'button', class: 'button secondary', disabled: true }, 'Stop');
  const answer = h('div', {
    class: 'stream-output',
    id: 'chat-answer',
    'aria-label': 'Answer',
    tabindex: '0',
    'data-testid': 'chat-answer',
  });
  const status = h('p', { class: 'muted small', role: 'status', 'data-testid': 'chat-status' });
  const errors = h('div');
  let running: AbortController | null = null;
  stop.addEventListener('click', () => running?.abort());
  ctx.signal.addEventListener('abort', () => running?.abort());

  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'chat-title' },
    h('h2', { id: 'chat-title' }, 'Chat (streamed)'),
    h('div', { class: 'field' }, h('label', { for: 'chat-model' }, 'LLM'), model),
    h('div', { class: 'field' }, h('label', { for: 'chat-prompt' }, 'Prompt'), prompt),
    h('div', { class: 'row' }, send, stop),
    errors,
    h('h3', null, 'Answer'),
    answer,
    status,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    running = new AbortController();
    send.disabled = true;
    stop.disabled = false;
    errors.replaceChildren();
    answer.textContent = '';
    answer.setAttribute('aria-busy', 'true');
    status.textContent = 'Waiting for the first token…';
    let chunks = 0;
    let finish = '';
    let usage = '';
    try {
      const res = await call('POST', '/v1/chat/completions', {
        body: {
          model: model.value,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: prompt.value }],
        },
        signal: running.signal,
      });
      if (!res.ok || !res.body) throw await errorOf(res);
      for await (const payload of sseData(res.body)) {
        if (payload === '[DONE]') break;
        const chunk = JSON.parse(payload) as ChatChunk & { error?: { message?: string } };
        if (chunk.error) throw new Error(chunk.error.message ?? 'the stream failed');
        const choice = chunk.choices?.[0];
        if (choice?.delta?.content) {
          answer.append(choice.delta.content);
          chunks++;
          status.textContent = `Streaming… ${chunks} chunk${chunks === 1 ? '' : 's'}`;
        }
        if (choice?.finish_reason) finish = choice.finish_reason;
        if (chunk.usage)
          usage = ` · ${chunk.usage.prompt_tokens} input / ${chunk.usage.completion_tokens} output tokens`;
      }
      status.textContent = `Done: ${chunks} chunks${finish ? ` · finish reason ${finish}` : ''}${usage}`;
    } catch (err) {
      if (running.signal.aborted) status.textContent = 'Stopped.';
      else {
        status.textContent = '';
        errors.append(errorNotice(errorText(err)));
      }
    } finally {
      answer.removeAttribute('aria-busy');
      send.disabled = false;
      stop.disabled = true;
      running = null;
    }
  });
  return form;
}

/** POST /v1/tasks (or its dry run), then GET /v1/tasks/{id} until the task finishes. */
function mediaPanel(ctx: ViewContext, media: Model[]): HTMLElement {
  const model = modelSelect('media-model', media);
  // Images finish fastest and show best: the natural first try.
  model.value = media.find((m) => m.category === 'image')?.id ?? model.value;
  const example = () =>
    JSON.stringify(
      EXAMPLE_INPUT[(media.find((m) => m.id === model.value)?.category ?? 'image') as MediaCategory] ?? {},
      null,
      2,
    );
  const input = h(
    'textarea',
    {
      id: 'media-input',
      name: 'input',
      rows: 6,
      class: 'mono',
      spellcheck: 'false',
      'aria-describedby': 'media-input-help',
    },
    example(),
  );
  let lastExample = input.value;
  model.addEventListener('change', () => {
    // Swap the example only when the user has not written their own input.
    if (input.value === lastExample) input.value = lastExample = example();
  });
  const callback = h('input', {
    id: 'media-callback',
    name: 'callback_url',
    type: 'url',
    placeholder: 'https://example.com/hook',
    autocomplete: 'off',
    'aria-describedby': 'media-callback-help',
  });
  const run = h('button', { type: 'submit', class: 'button primary' }, 'Run task');
  const price = h('button', { type: 'button', class: 'button secondary' }, 'Price it (dry run)');
  const progress = h('div', { class: 'task-progress', 'data-testid': 'media-progress' });
  const errors = h('div');

  const body = (dryRun: boolean) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.value);
    } catch {
      throw new Error('Input: not valid JSON');
    }
    return {
      model: model.value,
      input: parsed,
      ...(callback.value.trim() ? { callback_url: callback.value.trim() } : {}),
      ...(dryRun ? { dry_run: true } : {}),
    };
  };

  price.addEventListener('click', async () => {
    errors.replaceChildren();
    try {
      const { cost } = await data<{ cost: number }>('POST', '/v1/tasks', { body: body(true) });
      fill(progress, h('p', { role: 'status' }, `This task would cost ${usd(cost)}. Nothing was charged.`));
    } catch (err) {
      errors.append(errorNotice(errorText(err)));
    }
  });

  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'media-title' },
    h('h2', { id: 'media-title' }, 'Media task'),
    h('div', { class: 'field' }, h('label', { for: 'media-model' }, 'Model'), model),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'media-input' }, 'Input (JSON)'),
      input,
      h(
        'p',
        { id: 'media-input-help', class: 'help' },
        'The model-specific input, sent as "input". Sandbox models also take delay_ms and fail: true.',
      ),
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'media-callback' }, 'Callback URL (optional)'),
      callback,
      h(
        'p',
        { id: 'media-callback-help', class: 'help' },
        'Where the gateway POSTs the result when the task finishes.',
      ),
    ),
    h('div', { class: 'row' }, run, price),
    errors,
    progress,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.replaceChildren();
    run.disabled = true;
    try {
      const created = await data<{ task_id: string }>('POST', '/v1/tasks', { body: body(false) });
      const link = h(
        'a',
        { href: `/dashboard/tasks/${encodeURIComponent(created.task_id)}`, class: 'mono' },
        created.task_id,
      );
      const started = Date.now();
      let task: Task = { task_id: created.task_id, status: 'processing' } as Task;
      const draw = () => {
        const seconds = Math.round((Date.now() - started) / 1000);
        fill(
          progress,
          h(
            'p',
            { role: 'status' },
            'Task ',
            link,
            ' ',
            statusBadge(task.status),
            task.status === 'processing' ? ` ${seconds} s` : '',
          ),
          task.status === 'completed' && task.output ? mediaOutput(task.output, task.category ?? 'task') : null,
          task.status === 'failed' ? h('p', { class: 'error-text' }, task.error_message ?? 'The task failed.') : null,
        );
      };
      // The status comes live from the task's event stream; the timer only counts the seconds.
      draw();
      const ticker = setInterval(() => task.status === 'processing' && draw(), TICK_MS);
      try {
        await followTask(created.task_id, ctx.signal, (next) => {
          task = next;
          draw();
        });
      } finally {
        clearInterval(ticker);
      }
      if (task.status === 'processing' && !ctx.signal.aborted) {
        task = await data<Task>('GET', `/v1/tasks/${encodeURIComponent(created.task_id)}`, { signal: ctx.signal });
        draw();
      }
    } catch (err) {
      if (!ctx.signal.aborted) errors.append(errorNotice(errorText(err)));
    } finally {
      run.disabled = false;
    }
  });
  return form;
}

/** Try the gateway from the browser: a streamed LLM answer, or a media task watched to the end. */
export async function playgroundView(ctx: ViewContext): Promise<void> {
  ctx.heading('Playground', 'Every call here is a real API call on your account, charged like any other.');
  const models = await catalog();
  const llms = models.filter((m) => m.category === 'llm');
  const media = models.filter((m) => m.category !== 'llm' && m.category !== 'embedding');
  ctx.main.append(
    h(
      'div',
      { class: 'two-col' },
      llms.length ? chatPanel(ctx, llms) : h('p', { class: 'card' }, 'The catalog has no LLM.'),
      media.length ? mediaPanel(ctx, media) : h('p', { class: 'card' }, 'The catalog has no media model.'),
    ),
  );
}
