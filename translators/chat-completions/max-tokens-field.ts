/**
 * Which field carries the output cap for an upstream model. OpenAI's reasoning models (o1, o3,
 * o4-mini, gpt-5 and later, but not the gpt-5 chat models) refuse the deprecated `max_tokens`
 * ("not compatible with o-series models") and take `max_completion_tokens`; every other model,
 * and the OpenAI-compatible servers that only know `max_tokens`, keep `max_tokens`. Decided by
 * the upstream model's name, since a Messages client must always send a cap.
 * @see https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens
 */
export function maxTokensField(upstreamModel: string): 'max_tokens' | 'max_completion_tokens' {
  const name = upstreamModel.slice(upstreamModel.lastIndexOf('/') + 1).toLowerCase();
  return /^o\d/.test(name) || (/^gpt-[5-9]/.test(name) && !name.includes('-chat'))
    ? 'max_completion_tokens'
    : 'max_tokens';
}
