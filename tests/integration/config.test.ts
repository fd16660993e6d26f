import { describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startGateway } from '../helpers/gateway-process.ts';

async function tempFile(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** Starts a gateway expected to refuse its configuration; returns exit code and output. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const gw = await startGateway({ DATA_DIR: await mkdtemp(join(tmpdir(), 'gw-bad-')), ...env }, { waitReady: false });
  const code = await gw.proc.exited;
  await Bun.sleep(20);
  return { code, output: gw.output() };
}

const GOOD_YAML = `
providers:
  - id: acme
    kind: openai
    display_name: Acme
    base_url: http://127.0.0.1:9/v1
    api_key: \${ACME_API_KEY}
models:
  - id: acme/chat-large
    category: llm
    upstream_model: chat-large
    display_name: Chat Large
    created: 1735689600
    context_length: 128000
    max_output: 16384
    pricing: { input_per_mtok: 1.0, output_per_mtok: 4.0 }
  - id: acme/chat-small
    category: llm
    display_name: Chat Small
    pricing: { input_per_mtok: 0.1, output_per_mtok: 0.4 }
`;

describe('configuration', () => {
  test('a bad environment variable stops the process, naming the variable', async () => {
    const { code, output } = await refusedStart({ PORT: 'eighty' });
    expect(code).not.toBe(0);
    expect(output).toContain('PORT');
    const redis = await refusedStart({ REDIS_URL: 'http://localhost' });
    expect(redis.code).not.toBe(0);
    expect(redis.output).toContain('REDIS_URL: expected a redis:// URL');
  });

  test('a bad config value names its path in the file', async () => {
    const path = await tempFile('bad.yaml', GOOD_YAML.replace('input_per_mtok: 1.0', 'input_per_mtok: "cheap"'));
    const { code, output } = await refusedStart({ GATEWAY_CONFIG: path });
    expect(code).not.toBe(0);
    expect(output).toContain('models[0].pricing.input_per_mtok: expected number');
  });

  test('an unknown adapter kind, a model of an undeclared provider and a missing file are refused', async () => {
    const kind = await refusedStart({
      GATEWAY_CONFIG: await tempFile('k.yaml', GOOD_YAML.replace('kind: openai', 'kind: telepathy')),
    });
    expect(kind.output).toContain('providers[0].kind: unknown adapter "telepathy"');
    const orphan = await refusedStart({
      GATEWAY_CONFIG: await tempFile('o.yaml', GOOD_YAML.replace('id: acme/chat-small', 'id: other/chat-small')),
    });
    expect(orphan.output).toContain('models[1].id: provider "other" is not declared');
    const missing = await refusedStart({ GATEWAY_CONFIG: '/nonexistent/gateway.yaml' });
    expect(missing.code).not.toBe(0);
    expect(missing.output).toContain('GATEWAY_CONFIG: file not found');
    const json = await refusedStart({ GATEWAY_CONFIG: await tempFile('c.json', '{"providers": [') });
    expect(json.output).toContain('is not valid JSON');
  });

  test('a media model whose provider cannot run it is refused at start', async () => {
    // `openai` runs image and audio tasks (its media endpoints), not video; with its key set, so
    // that the model is in the catalog at all.
    const yaml = GOOD_YAML.replace(
      'id: acme/chat-small\n    category: llm',
      'id: acme/chat-small\n    category: video',
    );
    expect(yaml).toContain('category: video');
    const { code, output } = await refusedStart({
      GATEWAY_CONFIG: await tempFile('m.yaml', yaml),
      ACME_API_KEY: 'sk-test',
    });
    expect(code).toBe(1);
    expect(output).toContain(
      'configuration error: models: acme/chat-small: provider acme (kind openai) cannot run video tasks',
    );
  });

  test('a valid YAML file with ${ENV} references is served as the catalog', async () => {
    const path = await tempFile('good.yaml', GOOD_YAML);
    const gw = await startGateway({
      DATA_DIR: await mkdtemp(join(tmpdir(), 'gw-good-')),
      GATEWAY_CONFIG: path,
      ACME_API_KEY: 'sk-test',
    });
    try {
      const { key } = await createAccount(gw, uniqueEmail('cfg'));
      const res = await api(gw, 'GET', '/v1/models', { key });
      expect(res.body.data.map((m: { id: string }) => m.id)).toEqual(['acme/chat-large', 'acme/chat-small']);
      expect(res.body.data[0]).toMatchObject({
        provider_display: 'Acme',
        created: 1735689600,
        context_length: 128000,
        max_output: 16384,
      });
      // No release date in the file: `created` falls back to `added`.
      expect(res.body.data[1].created).toBe(res.body.data[1].added);
    } finally {
      await gw.stop();
    }
  });
});
