import { describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { configuredMedia } from '../../providers/common/config-media-model.ts';
import { compileInputSchema } from '../../providers/common/input-schema.ts';
import { priceOf } from '../../providers/common/media-pricing.ts';
import type { MediaOutput } from '../../providers/types.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { parseGatewayConfig, type ModelConfig } from '../../src/config/gateway-config.ts';
import { formatIssues } from '../../src/http/validation.ts';

/** Issue 7: the config-driven input schema, price rule and input mapping shared by media adapters. */

const model = (over: Partial<ModelConfig>): ModelConfig =>
  ({ id: 'acme/m', category: 'image', display_name: 'M', ...over }) as ModelConfig;
const issues = (schema: v.GenericSchema<unknown, Record<string, unknown>>, input: unknown) => {
  const r = v.safeParse(schema, input);
  return r.success ? '' : formatIssues(r.issues);
};
const image = (n: number): MediaOutput[] =>
  Array.from({ length: n }, () => ({ kind: 'image', url: 'https://x/y.png' }));

describe('input schema language', () => {
  const schema = compileInputSchema(
    {
      prompt: { type: 'string', required: true, max_length: 10 },
      num_outputs: { type: 'integer', min: 1, max: 4, default: 1 },
      guidance: { type: 'number', min: 0, max: 20 },
      aspect_ratio: { type: 'string', enum: ['1:1', '16:9'] },
      safe: { type: 'boolean' },
      images: { type: 'array', items: { type: 'string', pattern: '^https://' }, max_items: 2 },
      extra: { type: 'object' },
    },
    { path: 'models[0].options.input' },
  );

  test('valid input passes, defaults fill in, unknown fields pass through', () => {
    const r = v.parse(schema, {
      prompt: 'a cat',
      guidance: 7.5,
      aspect_ratio: '16:9',
      safe: true,
      images: ['https://a'],
      extra: { a: 1 },
      seed: 42,
    });
    expect(r).toEqual({
      prompt: 'a cat',
      num_outputs: 1,
      guidance: 7.5,
      aspect_ratio: '16:9',
      safe: true,
      images: ['https://a'],
      extra: { a: 1 },
      seed: 42,
    });
  });

  test('each rule names the field', () => {
    expect(issues(schema, {})).toBe('prompt: is required');
    expect(issues(schema, { prompt: 'x'.repeat(11) })).toBe('prompt: must be at most 10 characters');
    expect(issues(schema, { prompt: 'x', num_outputs: 1.5 })).toBe('num_outputs: must be an integer');
    expect(issues(schema, { prompt: 'x', num_outputs: 5 })).toBe('num_outputs: must be at most 4');
    expect(issues(schema, { prompt: 'x', guidance: '7' })).toContain('guidance: expected number');
    expect(issues(schema, { prompt: 'x', aspect_ratio: '4:3' })).toBe('aspect_ratio: must be one of "1:1", "16:9"');
    expect(issues(schema, { prompt: 'x', safe: 'yes' })).toContain('safe: expected boolean');
    expect(issues(schema, { prompt: 'x', images: ['http://a'] })).toBe('images[0]: must match ^https://');
    expect(issues(schema, { prompt: 'x', images: ['https://a', 'https://b', 'https://c'] })).toBe(
      'images: must have at most 2 items',
    );
    expect(issues(schema, { prompt: 'x', extra: [1] })).toBe('extra: must be an object');
    expect(issues(schema, { prompt: 'x', extra: 'a' })).toBe('extra: must be an object');
  });

  test('strict_input refuses fields the config does not name', () => {
    const strict = compileInputSchema({ prompt: { type: 'string' } }, { strict: true, path: 'p' });
    expect(issues(strict, { prompt: 'x', seed: 1 })).toBe('seed: is not an accepted field');
    expect(issues(strict, { prompt: 'x' })).toBe('');
  });

  test('no input spec: {prompt?: string} and everything else passes through', () => {
    const loose = compileInputSchema(undefined, { path: 'p' });
    expect(v.parse(loose, { anything: [1, 2] })).toEqual({ anything: [1, 2] });
    expect(issues(loose, { prompt: 3 })).toContain('prompt: expected string');
  });

  test('bad specs are ConfigErrors naming the setting', () => {
    const bad = (spec: unknown) => {
      try {
        compileInputSchema(spec, { path: 'models[2].options.input' });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      return 'no error';
    };
    expect(bad({ x: { type: 'text' } })).toBe(
      'models[2].options.input.x.type: expected one of string, number, integer, boolean, array, object, got "text"',
    );
    expect(bad({ x: { type: 'string', min: 1 } })).toBe(
      'models[2].options.input.x.min: unknown setting for a string field',
    );
    expect(bad({ x: { type: 'integer', max: 'ten' } })).toBe('models[2].options.input.x.max: expected a number');
    expect(bad({ x: { type: 'integer', max: 4, default: 9 } })).toBe(
      'models[2].options.input.x.default: the default must be at most 4',
    );
    expect(bad({ x: { type: 'string', enum: [1] } })).toBe(
      'models[2].options.input.x.enum: expected a non-empty list of strings',
    );
    expect(bad({ x: { type: 'string', pattern: '(' } })).toStartWith('models[2].options.input.x.pattern:');
    expect(bad({ x: { type: 'array', items: { type: 'nope' } } })).toBe(
      'models[2].options.input.x.items.type: expected one of string, number, integer, boolean, array, object, got "nope"',
    );
    expect(bad({ x: 'string' })).toStartWith('models[2].options.input.x: expected a field description');
    expect(bad(['prompt'])).toStartWith('models[2].options.input: expected a map');
  });

  test('GATEWAY_CONFIG names the model by index at start', () => {
    const raw = {
      providers: [{ id: 'acme', kind: 'replicate' }],
      models: [
        { id: 'acme/a', category: 'image', display_name: 'A' },
        { id: 'acme/b', category: 'image', display_name: 'B', options: { input: { prompt: { type: 'txt' } } } },
      ],
    };
    expect(() => parseGatewayConfig(raw, {}, 'gw.yaml')).toThrow(
      'gw.yaml: models[1].options.input.prompt.type: expected one of',
    );
    const badMap = {
      ...raw,
      models: [{ id: 'acme/a', category: 'image', display_name: 'A', options: { input_map: { a: 3 } } }],
    };
    expect(() => parseGatewayConfig(badMap, {}, 'gw.yaml')).toThrow(
      'gw.yaml: models[0].options.input_map.a: expected an upstream field name',
    );
  });
});

describe('price rules', () => {
  test('per_request + per_image × count + per_second × seconds + per_1k_chars, at least minimum', () => {
    expect(
      priceOf(
        { per_request: 0.01, per_image: 0.02, per_second: 0.1, per_1k_chars: 0.3 },
        { images: 2, seconds: 5, chars: 500 },
      ),
    ).toBeCloseTo(0.01 + 0.04 + 0.5 + 0.15, 12);
    expect(priceOf({ per_1k_chars: 0.3, minimum: 0.05 }, { images: 1, seconds: 0, chars: 10 })).toBe(0.05);
    expect(priceOf(undefined, { images: 3, seconds: 3, chars: 3 })).toBe(0);
    expect(priceOf({ per_image: 0.1 }, { images: 3, seconds: 0, chars: 0 })).toBe(0.3);
  });

  test('per_image reads the count field (a ceiling) and refunds images not produced', () => {
    const m = configuredMedia(
      model({ pricing: { per_image: 0.003, per_request: 0.001 }, options: { count_field: 'num_outputs' } }),
    );
    expect(m.price({ num_outputs: 4 })).toBeCloseTo(0.013, 12);
    expect(m.price({})).toBeCloseTo(0.004, 12);
    expect(m.price({ num_outputs: 2.2 })).toBeCloseTo(0.01, 12);
    expect(m.finalPrice({ num_outputs: 4 }, image(2))).toBeCloseTo(0.007, 12);
    // Never more than charged, even if the upstream made extra.
    expect(m.finalPrice({ num_outputs: 2 }, image(5))).toBeCloseTo(0.007, 12);
  });

  test('per_second from the duration field or default_seconds; per_1k_chars from text_field, text, then prompt', () => {
    const video = configuredMedia(
      model({
        category: 'video',
        pricing: { per_second: 0.05 },
        options: { duration_field: 'duration', default_seconds: 5 },
      }),
    );
    expect(video.price({ duration: 10 })).toBeCloseTo(0.5, 12);
    expect(video.price({ duration: '8' })).toBeCloseTo(0.4, 12);
    expect(video.price({})).toBeCloseTo(0.25, 12);
    expect(video.finalPrice({ duration: 10 }, [{ kind: 'video', url: 'https://x' }])).toBeCloseTo(0.5, 12);

    const tts = configuredMedia(model({ category: 'audio', pricing: { per_1k_chars: 0.3, minimum: 0.001 } }));
    expect(tts.price({ text: 'x'.repeat(2000) })).toBeCloseTo(0.6, 12);
    expect(tts.price({ prompt: 'héllo 👋' })).toBeCloseTo((7 * 0.3) / 1000, 12);
    expect(tts.price({})).toBe(0.001);
    const custom = configuredMedia(
      model({ category: 'audio', pricing: { per_1k_chars: 1 }, options: { text_field: 'script' } }),
    );
    expect(custom.price({ script: 'x'.repeat(500), text: 'ignored' })).toBeCloseTo(0.5, 12);
  });
});

describe('upstream input', () => {
  test('renames per input_map, passes the rest, drops undefined', () => {
    const m = configuredMedia(model({ options: { input_map: { size: 'image_size', n: 'num_images' } } }));
    expect(m.upstreamInput({ prompt: 'a', size: 'square', n: 2, seed: undefined, extra: null })).toEqual({
      prompt: 'a',
      image_size: 'square',
      num_images: 2,
      extra: null,
    });
  });

  test('configuredMedia checks its own options too', () => {
    expect(() => configuredMedia(model({ options: { count_field: 3 } }))).toThrow(
      'models[acme/m].options.count_field: expected a field name',
    );
    expect(() => configuredMedia(model({ options: { strict_input: 'yes' } }))).toThrow(
      'models[acme/m].options.strict_input',
    );
    expect(() => configuredMedia(model({ options: { default_seconds: -1 } }))).toThrow(
      'models[acme/m].options.default_seconds',
    );
  });
});
