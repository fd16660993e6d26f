import { describe, expect, test } from 'bun:test';
import { EnvelopeError } from '../../src/http/errors.ts';
import { parseTaskListQuery } from '../../src/tasks/list-query.ts';

const reject = (query: Record<string, string>): string => {
  try {
    parseTaskListQuery(query);
  } catch (err) {
    expect(err).toBeInstanceOf(EnvelopeError);
    expect((err as EnvelopeError).status).toBe(422);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
};

describe('GET /v1/tasks query', () => {
  test('defaults: page 1, page_size 25, no filter', () => {
    expect(parseTaskListQuery({})).toEqual({ page: 1, pageSize: 25, filter: {} });
  });

  test('page_size is 10, 25, 50 or 100; any other value becomes 25', () => {
    for (const size of [10, 25, 50, 100]) expect(parseTaskListQuery({ page_size: String(size) }).pageSize).toBe(size);
    for (const size of ['7', '0', '1000', 'abc', '-10', '25.5'])
      expect(parseTaskListQuery({ page_size: size }).pageSize).toBe(25);
  });

  test('filters: status, model, category list (case-insensitive), provider list, created range', () => {
    const q = parseTaskListQuery({
      page: '3',
      status: 'failed',
      model: 'sandbox/image',
      category: 'Image, llm',
      provider: 'sandbox,acme',
      created_after: '100',
      created_before: '100',
    });
    expect(q.page).toBe(3);
    expect(q.filter).toEqual({
      status: 'failed',
      model: 'sandbox/image',
      categories: ['image', 'llm'],
      providers: ['sandbox', 'acme'],
      createdAfter: new Date(100_000),
      createdBefore: new Date(100_000),
    });
  });

  test('bad values are 422s naming the parameter', () => {
    expect(reject({ page: '0' })).toStartWith('page:');
    expect(reject({ page: 'x' })).toStartWith('page:');
    expect(reject({ status: 'done' })).toStartWith('status:');
    expect(reject({ category: 'llm,text' })).toStartWith('category:');
    expect(reject({ created_after: 'yesterday' })).toStartWith('created_after:');
    expect(reject({ created_after: '200', created_before: '100' })).toStartWith('created_before:');
  });
});
