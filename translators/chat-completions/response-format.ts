import type { ResponseFormat } from '../canonical/request.ts';
import { JsonSchemaSchema } from './request-schema.ts';
import { jsonSchemaFormat } from '../common/json-schema-format.ts';
import { asObject, invalid, parseAt } from '../common/validation.ts';
import type { ChatResponseFormat } from './wire-types.ts';

/** `response_format` → canonical: `text`, `json_object` (JSON mode) or `json_schema` (structured outputs). */
export function decodeResponseFormat(raw: unknown): ResponseFormat {
  const format = asObject(raw) ?? invalid('response_format', 'must be an object');
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json' };
    case 'json_schema':
      return jsonSchemaFormat(parseAt(JsonSchemaSchema, format.json_schema, 'response_format.json_schema'));
    default:
      return invalid('response_format.type', 'must be one of text, json_object, json_schema');
  }
}

export function encodeResponseFormat(format: ResponseFormat): ChatResponseFormat {
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json':
      return { type: 'json_object' };
    case 'json-schema': {
      const spec: Extract<ChatResponseFormat, { type: 'json_schema' }>['json_schema'] = {
        name: format.name,
        schema: format.schema,
      };
      if (format.strict !== undefined) spec.strict = format.strict;
      if (format.description) spec.description = format.description;
      return { type: 'json_schema', json_schema: spec };
    }
    default: {
      const exhaustive: never = format;
      throw new Error(`unknown response format ${JSON.stringify(exhaustive)}`);
    }
  }
}
