/**
 * Why a generation stopped. `unified` is the gateway's own word; `raw` is what the upstream said,
 * kept for records. Each wire format maps its own reasons to and from these (see the
 * `finish-reason.ts` of each format's folder).
 */
export type UnifiedFinishReason =
  | 'stop'
  | 'stop-sequence'
  | 'length'
  | 'tool-calls'
  | 'content-filter'
  | 'error'
  | 'other';

export interface FinishReason {
  unified: UnifiedFinishReason;
  raw?: string;
}
