import type { ResponseFormat } from '../canonical/request.ts';

/** A validated `json_schema` format of either OpenAI format (`null` and absent alike). */
export interface JsonSchemaSpec {
  name: string;
  schema: Record<string, unknown>;
  strict?: boolean | null;
  description?: string | null;
}

/** A client's json_schema response format → canonical: `strict` only when given, an empty description left out. */
export function jsonSchemaFormat(spec: JsonSchemaSpec): ResponseFormat {
  const format: ResponseFormat = { type: 'json-schema', name: spec.name, schema: spec.schema };
  if (typeof spec.strict === 'boolean') format.strict = spec.strict;
  if (spec.description) format.description = spec.description;
  return format;
}
