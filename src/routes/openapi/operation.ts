import { type JsonSchema, jsonSchema, type Parameter, parametersOf, type Schema } from './json-schema.ts';

/** How one endpoint answers: a JSON schema, or only a description (files, streams of bytes). */
export interface Answer {
  description: string;
  /** The JSON body; several content types may be given by name. */
  schema?: Schema;
  content?: Record<string, Schema | undefined>;
}

export interface OperationSpec {
  summary: string;
  description?: string;
  /** No API key needed. */
  public?: boolean;
  externalDocs?: string;
  path?: Schema;
  query?: Schema;
  headers?: Parameter[];
  /** The request body's validator, or one per content type. */
  body?: Schema | Record<string, Schema>;
  /** Success answers by status (default 200). */
  ok: Answer | Record<number, Answer>;
  /** Error answers in the endpoint's own error shape. */
  errors?: { shape: Schema; codes: number[] };
  /** Answers that are not JSON (404 of a file, 304…). */
  other?: Record<number, string>;
}

const isAnswer = (value: Answer | Record<number, Answer>): value is Answer => 'description' in value;
const isSchema = (value: Schema | Record<string, Schema>): value is Schema => '~standard' in value;

function content(answer: Answer): Record<string, { schema?: JsonSchema }> | undefined {
  if (answer.content) {
    return Object.fromEntries(
      Object.entries(answer.content).map(([type, schema]) => [type, schema ? { schema: jsonSchema(schema) } : {}]),
    );
  }
  return answer.schema ? { 'application/json': { schema: jsonSchema(answer.schema) } } : undefined;
}

const response = (answer: Answer) => ({ description: answer.description, content: content(answer) });

/**
 * One OpenAPI operation built from the valibot schemas the route itself validates with, so the
 * document cannot drift from what the gateway accepts.
 */
export function operation(spec: OperationSpec) {
  const parameters = [
    ...(spec.path ? parametersOf('path', spec.path) : []),
    ...(spec.query ? parametersOf('query', spec.query) : []),
    ...(spec.headers ?? []),
  ];
  const bodies =
    spec.body === undefined ? undefined : isSchema(spec.body) ? { 'application/json': spec.body } : spec.body;
  const oks = isAnswer(spec.ok) ? { 200: spec.ok } : spec.ok;
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(oks)) responses[status] = response(answer);
  for (const code of spec.errors?.codes ?? []) {
    responses[String(code)] = response({ description: `error ${code}`, schema: spec.errors?.shape });
  }
  for (const [status, description] of Object.entries(spec.other ?? {})) responses[status] = { description };
  return {
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    ...(spec.externalDocs ? { externalDocs: { url: spec.externalDocs } } : {}),
    ...(spec.public ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(bodies
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              Object.entries(bodies).map(([type, schema]) => [type, { schema: jsonSchema(schema) }]),
            ),
          },
        }
      : {}),
    responses,
  };
}
