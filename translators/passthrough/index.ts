export { anthropicPassthrough } from './anthropic-messages-passthrough.ts';
export { chatPassthrough } from './chat-completions-passthrough.ts';
export { renameResponseObject, responsesPassthrough } from './responses-passthrough.ts';
export { responsesPassthroughRequest } from './responses-passthrough-request.ts';
export { chatPassthroughRequest } from './chat-passthrough-request.ts';
export type { PassthroughContext, PassthroughRules } from './passthrough-rules.ts';
export { createChatChunkRepair, type ChatChunkRepair } from './chat-chunk-repair.ts';
export { responsesCanonicalView } from './responses-canonical-view.ts';
export { bodyWithId } from './fill-missing-id.ts';
