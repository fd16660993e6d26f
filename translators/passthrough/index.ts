export { anthropicPassthrough } from './anthropic-messages-passthrough.ts';
export { chatPassthrough } from './chat-completions-passthrough.ts';
export { renameResponseObject, responsesPassthrough } from './responses-passthrough.ts';
export { responsesPassthroughRequest } from './responses-passthrough-request.ts';
export { chatPassthroughRequest } from './chat-passthrough-request.ts';
export type { PassthroughContext, PassthroughRules } from './passthrough-rules.ts';
export { createChatChunkRepair, type ChatChunkRepair } from './chat-chunk-repair.ts';
export { responsesCanonicalView, responsesLeftOut } from './responses-canonical-view.ts';
export { bodyWithId } from './fill-missing-id.ts';
export {
  countLeftOut,
  nothingUncounted,
  type PassthroughRequest,
  type PerCallTools,
  type UncountedInput,
} from './uncounted-input.ts';
export { anthropicPassthroughRequest } from './anthropic-passthrough-request.ts';
export { anthropicCanonicalView } from './anthropic-canonical-view.ts';
export { anthropicCountTokensRequest } from './anthropic-count-tokens-request.ts';
