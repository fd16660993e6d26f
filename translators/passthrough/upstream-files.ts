import { asObject, invalid, isSet, type Json } from '../common/validation.ts';

/**
 * A passed-through body goes to the upstream under the gateway's own key, so what it names by id
 * in the provider's storage — files, vector stores, code containers — is looked up in the
 * operator's upstream account, which every client of the gateway shares. Such names are refused
 * (400 naming the field): a client would read what the operator or another client stored, and an
 * answer without the file would be wrong, not merely poorer. Content sent inline (base64, a URL,
 * text) passes.
 */
const WHY = "names the provider's storage, which holds the gateway's own files, not the client's";

/** A Messages block naming a file of Anthropic's Files API. @see https://docs.anthropic.com/en/docs/build-with-claude/files */
export function refuseAnthropicFile(block: Json, at: string): void {
  if (block.type === 'container_upload') invalid(`${at}.type`, `container_upload ${WHY}`);
  if (asObject(block.source)?.type === 'file')
    invalid(`${at}.source.type`, `a file source ${WHY}; send the content as base64, text or url`);
}

/** A Responses content part by `file_id` (`input_file`, `input_image`, a computer's screenshot). */
function refuseFileId(part: unknown, at: string): void {
  const obj = asObject(part);
  if (obj && isSet(obj.file_id))
    invalid(`${at}.file_id`, `file_id ${WHY}; send the content as file_data, a data URL or a URL`);
}

/** Every part of `parts` (an array) by `file_id`. */
function refuseFileIds(parts: unknown, at: string): void {
  if (!Array.isArray(parts)) return;
  for (const [j, part] of parts.entries()) refuseFileId(part, `${at}[${j}]`);
}

/**
 * Built-in tools that read the operator's storage: `file_search` (vector stores), a named code
 * container, an image generation's mask by `file_id`.
 */
function refuseStorageTool(tool: unknown, at: string): void {
  const obj = asObject(tool);
  if (obj?.type === 'file_search') invalid(`${at}.type`, `file_search searches vector stores; it ${WHY}`);
  if (obj?.type === 'image_generation') refuseFileId(obj.input_image_mask, `${at}.input_image_mask`);
  if (obj?.type !== 'code_interpreter') return;
  const container = obj.container;
  if (typeof container === 'string') invalid(`${at}.container`, `a container id ${WHY}; use {"type": "auto"}`);
  const files = asObject(container)?.file_ids;
  if (Array.isArray(files) && files.length) invalid(`${at}.container.file_ids`, `file_ids ${WHY}`);
}

/**
 * A Responses body's names for the operator's storage: parts by `file_id` in input messages,
 * function and computer call outputs, `file_search`, code containers by id or with files, and
 * an image generation tool's mask by `file_id`.
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
export function refuseResponsesStorage(body: Json): void {
  if (Array.isArray(body.tools)) for (const [i, tool] of body.tools.entries()) refuseStorageTool(tool, `tools[${i}]`);
  if (!Array.isArray(body.input)) return;
  body.input.forEach((item, i) => {
    const obj = asObject(item);
    if (!obj) return;
    if (obj.type === 'computer_call_output') refuseFileId(obj.output, `input[${i}].output`);
    else if (obj.type === 'function_call_output') refuseFileIds(obj.output, `input[${i}].output`);
    else refuseFileIds(obj.content, `input[${i}].content`);
  });
}
