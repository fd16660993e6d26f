import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

export type Schema = v.GenericSchema;
export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of a valibot schema, for the OpenAPI document. Checks JSON Schema cannot say
 * (custom checks, transforms of query strings) are left out rather than refused: the document
 * states the shape, the validator stays the judge.
 */
export function jsonSchema(schema: Schema): JsonSchema {
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, { errorMode: 'ignore' });
  return rest;
}

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  description?: string;
  schema: JsonSchema;
}

/** One OpenAPI parameter per property of an object schema (a query string's validator). */
export function parametersOf(where: 'query' | 'path', schema: Schema): Parameter[] {
  const object = jsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      ...(where === 'path' || required.has(name) ? { required: true } : {}),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}
