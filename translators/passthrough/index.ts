export { anthropicPassthrough } from './anthropic-messages-passthrough.ts';
export { chatPassthrough } from './chat-completions-passthrough.ts';
export type { PassthroughContext, PassthroughRules } from './passthrough-rules.ts';
export { createChatChunkRepair, type ChatChunkRepair } from './chat-chunk-repair.ts';
