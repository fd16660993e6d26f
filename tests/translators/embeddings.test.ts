import { describe, expect, test } from 'bun:test';
import { InvalidRequestError } from '../../translators/canonical/errors.ts';
import {
  base64ToFloats,
  decodeEmbeddingRequest,
  decodeEmbeddingResponse,
  encodeEmbeddingRequest,
  encodeEmbeddingResponse,
  floatsToBase64,
  MAX_EMBEDDING_INPUTS,
} from '../../translators/embeddings/index.ts';

function rejects(body: unknown): InvalidRequestError {
  try {
    decodeEmbeddingRequest(body);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('decodeEmbeddingRequest', () => {
  test('every input form of the OpenAI API', () => {
    const one = decodeEmbeddingRequest({ model: 'm/e', input: 'hello' }).value;
    expect(one).toEqual({ request: { model: 'm/e', inputs: [{ type: 'text', text: 'hello' }] }, encoding: 'float' });
    expect(decodeEmbeddingRequest({ model: 'm/e', input: ['a', 'b'] }).value.request.inputs).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
    expect(decodeEmbeddingRequest({ model: 'm/e', input: [1, 2, 3] }).value.request.inputs).toEqual([
      { type: 'tokens', tokens: [1, 2, 3] },
    ]);
    expect(decodeEmbeddingRequest({ model: 'm/e', input: [[1], [2, 3]] }).value.request.inputs).toEqual([
      { type: 'tokens', tokens: [1] },
      { type: 'tokens', tokens: [2, 3] },
    ]);
    const full = decodeEmbeddingRequest({
      model: 'm/e',
      input: 'x',
      encoding_format: 'base64',
      dimensions: 64,
      user: 'u1',
    }).value;
    expect(full).toEqual({
      request: { model: 'm/e', inputs: [{ type: 'text', text: 'x' }], dimensions: 64, user: 'u1' },
      encoding: 'base64',
    });
  });

  test('unknown settings are dropped with a warning, never silently', () => {
    const { warnings } = decodeEmbeddingRequest({ model: 'm/e', input: 'x', truncate: 'END', extra: null });
    expect(warnings).toEqual([
      { type: 'unsupported-setting', field: 'truncate', message: 'not an embeddings setting; ignored' },
    ]);
  });

  test('bad input names the field', () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ input: 'x' }, 'model', /is required/],
      [{ model: 'm/e' }, 'input', /is required/],
      [{ model: 'm/e', input: '' }, 'input', /must not be empty/],
      [{ model: 'm/e', input: [] }, 'input', /must not be empty/],
      [{ model: 'm/e', input: ['a', ''] }, 'input[1]', /must not be empty/],
      [{ model: 'm/e', input: ['a', [1]] }, 'input[1]', /must not mix/],
      [{ model: 'm/e', input: [[1], 'a'] }, 'input[1]', /must not mix/],
      [{ model: 'm/e', input: [1, 'a'] }, 'input[1]', /token id/],
      [{ model: 'm/e', input: [1, 1e300] }, 'input[1]', /at most/],
      [{ model: 'm/e', input: [[1, -1]] }, 'input[0][1]', /0 or more/],
      [{ model: 'm/e', input: [[1.5]] }, 'input[0][0]', /integer/],
      [{ model: 'm/e', input: [[]] }, 'input[0]', /must not be empty/],
      [{ model: 'm/e', input: [{ text: 'a' }] }, 'input[0]', /string or an array/],
      [{ model: 'm/e', input: 5 }, 'input', /must be a string/],
      [{ model: 'm/e', input: 'x', encoding_format: 'int8' }, 'encoding_format', /float or base64/],
      [{ model: 'm/e', input: 'x', dimensions: 0 }, 'dimensions', /at least 1/],
      [{ model: 'm/e', input: 'x', dimensions: 2.5 }, 'dimensions', /integer/],
      [{ model: 'm/e', input: 'x', dimensions: 1e308 }, 'dimensions', /at most/],
      [{ model: 'm/e', input: Array(MAX_EMBEDDING_INPUTS + 1).fill('a') }, 'input', /at most 2048/],
      [{ model: 'm/e', input: Array(300_001).fill(1) }, 'input', /at most 300000 token ids/],
    ];
    for (const [body, param, message] of cases) {
      const err = rejects(body);
      expect({ body, param: err.param }).toEqual({ body, param });
      expect(err.message).toMatch(message);
      expect(err.message).toStartWith(`${param}: `);
    }
    expect(rejects([1, 2]).message).toMatch(/JSON object/);
    // One tokenized input is counted in tokens, not inputs: 3,000 token ids were refused as 2,048 inputs.
    const long = decodeEmbeddingRequest({ model: 'm/e', input: Array.from({ length: 3000 }, (_, i) => i) });
    expect(long.value.request.inputs).toEqual([{ type: 'tokens', tokens: expect.any(Array) }]);
  });
});

describe('vectors on the wire', () => {
  test('base64 is little-endian float32, as the openai SDK decodes it', () => {
    const vector = Float32Array.from([0.5, -1.25, 3e-8, 0]);
    const text = floatsToBase64(vector);
    expect(Buffer.from(text, 'base64').readFloatLE(4)).toBe(-1.25);
    expect(base64ToFloats(text)).toEqual(vector);
    expect(base64ToFloats('AAA')).toBeUndefined(); // 2 bytes: not whole float32s
    expect(base64ToFloats('not base64!')).toBeUndefined();
  });

  test('the response in both encodings, naming the gateway model and the charged tokens', () => {
    const response = { vectors: [Float32Array.from([0.6, 0.8]), Float32Array.from([1, 0])], inputTokens: 9 };
    const float = encodeEmbeddingResponse(response, 'gw/model', 'float', 7);
    expect(float).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [Math.fround(0.6), Math.fround(0.8)] },
        { object: 'embedding', index: 1, embedding: [1, 0] },
      ],
      model: 'gw/model',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
    const b64 = encodeEmbeddingResponse(response, 'gw/model', 'base64', 7);
    expect(b64.data.map((d) => base64ToFloats(d.embedding as string))).toEqual(response.vectors);
  });

  test('the upstream request asks for floats under the upstream model name', () => {
    const texts = encodeEmbeddingRequest(
      { model: 'gw/e', inputs: [{ type: 'text', text: 'a' }], dimensions: 8, user: 'u' },
      'text-embedding-3-small',
    );
    expect(texts).toEqual({
      model: 'text-embedding-3-small',
      input: ['a'],
      encoding_format: 'float',
      dimensions: 8,
      user: 'u',
    });
    const tokens = encodeEmbeddingRequest({ model: 'gw/e', inputs: [{ type: 'tokens', tokens: [4, 5] }] }, 'up');
    expect(tokens).toEqual({ model: 'up', input: [[4, 5]], encoding_format: 'float' });
  });

  test('upstream answers: out of order, base64 or floats, usage; malformed ones throw', () => {
    const body = {
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: floatsToBase64(Float32Array.from([0, 1])) },
        { object: 'embedding', index: 0, embedding: [1, 0] },
      ],
      usage: { prompt_tokens: 12, total_tokens: 12 },
    };
    const decoded = decodeEmbeddingResponse(body, 2);
    expect(decoded.vectors).toEqual([Float32Array.from([1, 0]), Float32Array.from([0, 1])]);
    expect(decoded.inputTokens).toBe(12);
    expect(decodeEmbeddingResponse({ data: [{ embedding: [1] }] }, 1).inputTokens).toBeUndefined();
    expect(() => decodeEmbeddingResponse(body, 3)).toThrow(/expected 3 embeddings/);
    expect(() => decodeEmbeddingResponse({ data: [{ index: 0, embedding: ['x'] }] }, 1)).toThrow(/data\[0\]/);
    expect(() =>
      decodeEmbeddingResponse(
        {
          data: [
            { index: 0, embedding: [1] },
            { index: 0, embedding: [2] },
          ],
        },
        2,
      ),
    ).toThrow(/data\[1\]/);
    expect(() => decodeEmbeddingResponse('<html>', 1)).toThrow(/invalid upstream embeddings/);
  });
});
