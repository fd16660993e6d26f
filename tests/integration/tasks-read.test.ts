import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/** LLM calls are recorded off the request path; poll until `n` tasks are listed. */
async function waitForTasks(gw: GatewayProcess, key: string, n: number, query = '') {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const res = await api(gw, 'GET', `/v1/tasks?page_size=100${query}`, { key });
    if (res.body.pagination?.total >= n || Date.now() > deadline) return res;
    await Bun.sleep(50);
  }
}

for (const mode of MODES) {
  describe(`reading tasks: LLM calls are tasks of category llm [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let otherKey: string;

    beforeAll(async () => {
      gw = await startGateway(await mode.env('tasksread'));
      ({ key } = await createAccount(gw, uniqueEmail('tasks'), 5));
      ({ key: otherKey } = await createAccount(gw, uniqueEmail('other'), 5));
      for (const word of ['alpha', 'beta', 'gamma']) {
        const res = await api(gw, 'POST', '/v1/chat/completions', {
          key,
          body: { model: 'sandbox/echo', messages: [{ role: 'user', content: word }] },
        });
        expect(res.status).toBe(200);
      }
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('the list shows every call newest first, with input, output, usage and cost', async () => {
      const res = await waitForTasks(gw, key, 3);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, code: 200 });
      expect(res.body.pagination).toEqual({
        page: 1,
        page_size: 100,
        total: 3,
        total_pages: 1,
        has_next: false,
        has_previous: false,
      });
      const tasks = res.body.data;
      expect(tasks.map((t: any) => t.input.messages[0].content)).toEqual(['gamma', 'beta', 'alpha']);
      for (const task of tasks) {
        expect(task).toMatchObject({
          model: 'sandbox/echo',
          category: 'llm',
          status: 'completed',
          callback_url: null,
          callback_result: null,
        });
        expect(task.task_id).toBeString();
        expect(task.created_at).toBeNumber();
        // 1 input token at $1/M, 2 output tokens ("echo: word") at $2/M.
        expect(task.cost).toBeCloseTo(0.000005, 10);
        expect(task.output.usage).toEqual({ input_tokens: 1, output_tokens: 2, total_tokens: 3 });
        expect(task).not.toHaveProperty('error_message');
      }
      const one = await api(gw, 'GET', `/v1/tasks/${tasks[0].task_id}`, { key });
      expect(one.status).toBe(200);
      expect(one.body.data).toMatchObject({
        task_id: tasks[0].task_id,
        status: 'completed',
        output: { text: 'echo: gamma' },
      });
    });

    test('filters, pages and page_size rules', async () => {
      await waitForTasks(gw, key, 3);
      const page2 = await api(gw, 'GET', '/v1/tasks?page_size=10&page=2', { key });
      expect(page2.body.data).toEqual([]);
      expect(page2.body.pagination).toMatchObject({
        page: 2,
        page_size: 10,
        total: 3,
        has_previous: true,
        has_next: false,
      });
      const odd = await api(gw, 'GET', '/v1/tasks?page_size=7', { key });
      expect(odd.body.pagination.page_size).toBe(25);
      expect((await api(gw, 'GET', '/v1/tasks?category=LLM', { key })).body.data).toHaveLength(3);
      expect((await api(gw, 'GET', '/v1/tasks?category=image,video', { key })).body.data).toEqual([]);
      expect(
        (await api(gw, 'GET', '/v1/tasks?provider=sandbox&status=completed&model=sandbox/echo', { key })).body.data,
      ).toHaveLength(3);
      expect((await api(gw, 'GET', '/v1/tasks?provider=acme', { key })).body.data).toEqual([]);
      expect((await api(gw, 'GET', '/v1/tasks?status=failed', { key })).body.data).toEqual([]);
      const now = Math.floor(Date.now() / 1000);
      expect((await api(gw, 'GET', `/v1/tasks?created_after=${now + 60}`, { key })).body.data).toEqual([]);
      expect(
        (await api(gw, 'GET', `/v1/tasks?created_before=${now + 60}&created_after=${now - 600}`, { key })).body.data,
      ).toHaveLength(3);
    });

    test('bad filters are 422 envelopes; unknown and foreign tasks are 404s', async () => {
      const bad = await api(gw, 'GET', '/v1/tasks?created_after=200&created_before=100', { key });
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({
        success: false,
        code: 422,
        data: { message: expect.stringContaining('created_before') },
      });
      expect((await api(gw, 'GET', '/v1/tasks?status=done', { key })).status).toBe(422);

      const mine = (await waitForTasks(gw, key, 3)).body.data[0].task_id;
      const foreign = await api(gw, 'GET', `/v1/tasks/${mine}`, { key: otherKey });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ success: false, code: 404 });
      expect((await api(gw, 'GET', '/v1/tasks/nope', { key })).status).toBe(404);
      expect((await api(gw, 'GET', '/v1/tasks', { key: otherKey })).body.data).toEqual([]);
      expect((await api(gw, 'GET', '/v1/tasks')).status).toBe(401);
    });
  });
}
