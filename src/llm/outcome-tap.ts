import {
  emptyUsage,
  mergeUsage,
  type AssistantContentPart,
  type CanonicalResponse,
  type CanonicalUsage,
  type FinishReason,
  type StreamEvent,
} from '../../translators/canonical/index.ts';
import { estimateTokens } from './pricing.ts';

/** How a streamed call ended, as seen by the gateway. */
export type StreamOutcome =
  | { status: 'completed'; response: CanonicalResponse; usageEstimated: false }
  | { status: 'failed'; message: string; response: CanonicalResponse; usageEstimated: boolean }
  | { status: 'cancelled'; response: CanonicalResponse; usageEstimated: boolean };

/**
 * Watches canonical events go by and rebuilds the call's response: content, finish and usage.
 * `beforeFinish` runs (and is awaited) before the finish event moves on, so state a client may
 * use right after the stream (a stored Responses object) is written first.
 */
export class OutcomeTap {
  private id = '';
  private created = Math.floor(Date.now() / 1000);
  private readonly blocks = new Map<number, AssistantContentPart>();
  private usage: CanonicalUsage = emptyUsage();
  private usageSeen = false;
  private finishReason: FinishReason = { unified: 'other' };
  private stopSequence?: string;
  private settled = false;

  constructor(
    private readonly model: string,
    /** The input's estimate (src/llm/input-estimate.ts), read only when the upstream reported no usage. */
    private readonly inputEstimate: () => number,
    /** Records the outcome; what it returns (the charge's commit) is awaited before the stream's end moves on. */
    private readonly onOutcome: (outcome: StreamOutcome) => Promise<void> | void,
    private readonly beforeFinish?: (response: CanonicalResponse) => Promise<void>,
  ) {}

  /**
   * Takes one event on its way to the client. A `finish` or an `error` returns a promise the
   * caller awaits before passing the event on: the stored state (`beforeFinish`) and the call's
   * charge are committed before the client can see the end (a crash then cannot lose the charge).
   */
  accept(event: StreamEvent): Promise<void> | undefined {
    this.observe(event);
    if (event.type === 'error')
      return this.settle({
        status: 'failed',
        message: event.error.message,
        response: this.response(),
        usageEstimated: !this.usageSeen,
      });
    if (event.type !== 'finish') return undefined;
    if (!this.beforeFinish)
      return this.settle({ status: 'completed', response: this.response(), usageEstimated: false });
    return this.beforeFinish(this.response()).then(() =>
      this.settle({ status: 'completed', response: this.response(), usageEstimated: false }),
    );
  }

  /** The stream is over. Decoders always end with finish or error; unsettled here means no events at all. */
  end(): Promise<void> | undefined {
    return this.settle({
      status: 'failed',
      message: 'upstream stream ended without a finish',
      response: this.response(),
      usageEstimated: !this.usageSeen,
    });
  }

  /** The client went away: charge what was produced so far. */
  cancelled(): void {
    this.settle({ status: 'cancelled', response: this.response(), usageEstimated: !this.usageSeen });
  }

  private settle(outcome: StreamOutcome): Promise<void> | undefined {
    if (this.settled) return undefined;
    this.settled = true;
    return this.onOutcome(outcome) ?? undefined;
  }

  private observe(event: StreamEvent): void {
    switch (event.type) {
      case 'message-start':
        this.id = event.id;
        this.created = event.created;
        if (event.usage) this.absorbUsage(event.usage);
        break;
      case 'text-start':
        this.blocks.set(event.index, { type: 'text', text: '' });
        break;
      case 'text-delta': {
        const block = this.blocks.get(event.index);
        if (block?.type === 'text') block.text += event.delta;
        break;
      }
      case 'tool-call-start':
        this.blocks.set(event.index, { type: 'tool-call', id: event.id, name: event.name, arguments: '' });
        break;
      case 'tool-call-delta': {
        const block = this.blocks.get(event.index);
        if (block?.type === 'tool-call') block.arguments += event.delta;
        break;
      }
      case 'reasoning-start':
        this.blocks.set(
          event.index,
          event.redacted === undefined
            ? { type: 'reasoning', text: '' }
            : { type: 'reasoning', text: '', redacted: event.redacted },
        );
        break;
      case 'reasoning-delta': {
        const block = this.blocks.get(event.index);
        if (block?.type === 'reasoning') block.text += event.delta;
        break;
      }
      case 'reasoning-end': {
        const block = this.blocks.get(event.index);
        if (block?.type === 'reasoning' && event.signature !== undefined) block.signature = event.signature;
        break;
      }
      case 'text-end':
      case 'tool-call-end':
      case 'error':
        break;
      case 'usage':
        this.absorbUsage(event.usage);
        break;
      case 'finish':
        this.finishReason = event.finishReason;
        this.stopSequence = event.stopSequence;
        this.absorbUsage(event.usage);
        break;
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown stream event ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  private absorbUsage(update: Partial<CanonicalUsage>): void {
    if (update.outputTokens !== undefined && update.outputTokens > 0) this.usageSeen = true;
    this.usage = mergeUsage(this.usage, update);
  }

  response(): CanonicalResponse {
    const content = [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    let usage = this.usage;
    if (!this.usageSeen) {
      // Cut short before the upstream reported usage: estimate from what was produced.
      const produced = content.reduce(
        (sum, b) => sum + estimateTokens(b.type === 'tool-call' ? b.arguments : b.text),
        0,
      );
      usage = mergeUsage(usage, {
        inputTokens: usage.inputTokens || this.inputEstimate(),
        outputTokens: Math.max(usage.outputTokens, produced),
      });
    }
    return {
      id: this.id,
      model: this.model,
      created: this.created,
      content,
      finishReason: this.finishReason,
      stopSequence: this.stopSequence,
      usage,
    };
  }
}
