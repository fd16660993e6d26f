import type { FinishReason } from './finish-reason.ts';
import type { AssistantContentPart } from './request.ts';
import type { CanonicalUsage } from './usage.ts';

/** A finished, non-streamed generation. */
export interface CanonicalResponse {
  /** Upstream id when it has one; encoders may mint their own prefix-correct ids. */
  id: string;
  /** Gateway model id. */
  model: string;
  /** Unix seconds. */
  created: number;
  content: AssistantContentPart[];
  finishReason: FinishReason;
  /** The matched stop sequence when `finishReason.unified` is `stop-sequence`. */
  stopSequence?: string;
  usage: CanonicalUsage;
}
