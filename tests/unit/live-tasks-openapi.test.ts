import { expect, test } from 'bun:test';
import { openApiDocument } from '../../src/routes/openapi/document.ts';

/** The OpenAPI document knows the live-task surface: cancel, events, the `cancelled` status, the callback. */
test('cancel and events are documented, and cancelled is a status of the filter, the record and the callback', () => {
  const doc = openApiDocument() as unknown as {
    paths: Record<string, Record<string, any>>;
    webhooks: Record<string, Record<string, any>>;
  };
  expect(Object.keys(doc.paths['/v1/tasks/{task_id}/cancel'] ?? {})).toEqual(['post']);
  expect(Object.keys(doc.paths['/v1/tasks/{task_id}/cancel']?.post.responses)).toEqual(['200', '401', '404', '409']);
  expect(Object.keys(doc.paths['/v1/tasks/{task_id}/events']?.get.responses['200'].content)).toEqual([
    'text/event-stream',
  ]);
  const filter = doc.paths['/v1/tasks']?.get.parameters.find((p: { name: string }) => p.name === 'status');
  expect(filter.schema.enum).toContain('cancelled');
  const record = doc.paths['/v1/tasks/{task_id}']?.get.responses['200'].content['application/json'].schema;
  expect(record.properties.data.properties.status.enum).toContain('cancelled');
  const callback = doc.webhooks.taskFinished?.post;
  const statuses = callback.requestBody.content['application/json'].schema.anyOf.map(
    (s: { properties: { status: { const: string } } }) => s.properties.status.const,
  );
  expect(statuses).toEqual(['completed', 'failed', 'cancelled']);
  expect(callback.parameters.map((p: { name: string }) => p.name)).toContain('webhook-id');
});
