export { anthropicPassthrough } from './anthropic-messages-passthrough.ts';
export { chatPassthrough } from './chat-completions-passthrough.ts';
export type { PassthroughContext, PassthroughRules } from './passthrough-rules.ts';
export { createToolCallIndexState, type ToolCallIndexState } from './chat-tool-call-index.ts';
