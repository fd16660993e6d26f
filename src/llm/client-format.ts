import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalResponse,
  StreamEvent,
  TranslationWarning,
} from '../../translators/canonical/index.ts';
import type { PassthroughContext, PassthroughRequest, PassthroughRules } from '../../translators/passthrough/index.ts';
import type { StreamTranslator } from '../../translators/common/stream-translator.ts';
import type { UpstreamStreamFormat } from '../../providers/types.ts';
import type { ErrorFamily } from './llm-error.ts';

export type ClientFormatName = 'chat-completions' | 'responses' | 'anthropic-messages';

/** Responses-only request state the service acts on (conversation storage). */
export interface ResponsesState {
  previousResponseId?: string;
  store: boolean;
  /** Echo-back fields of the response object (instructions, tools, metadata…), opaque here. */
  echo: Record<string, unknown>;
}

export interface DecodedClientRequest {
  request: CanonicalRequest;
  warnings: TranslationWarning[];
  /** Chat completions: the client asked for the trailing usage chunk. */
  includeUsage: boolean;
  responses?: ResponsesState;
}

export interface EncodeContext {
  /** The id the client sees for this call (`chatcmpl-…`, `resp_…`, `msg_…`). */
  id: string;
  model: string;
  created: number;
  decoded: DecodedClientRequest;
}

/** How a client format passes through to an upstream of its own format. */
export interface Passthrough {
  format: UpstreamStreamFormat;
  rules: PassthroughRules;
  /**
   * For adapters that accept the client's body (`LlmAdapter.passthroughFormat`): the client's
   * body → the upstream body, `history` being the stored conversation it continues.
   */
  /**
   * `history`: the stored conversation a Responses call continues; `wireItems`: the same as its
   * Responses upstream saw it, when it was passed through (sent back instead, losing nothing).
   */
  request?(body: Record<string, unknown>, history: CanonicalMessage[], wireItems?: unknown[]): PassthroughRequest;
  /**
   * What the gateway decodes of a body it passes through (for the hold, the records and the
   * store): the parts the canonical request has no form for left out, since the upstream reads them.
   */
  view?(body: Record<string, unknown>): Record<string, unknown>;
  /** The upstream's non-stream body → what the client receives. */
  response?(body: Record<string, unknown>, ctx: PassthroughContext): Record<string, unknown>;
}

/** What the passthrough rules need to know of a call. */
export function passthroughContext(ctx: EncodeContext): PassthroughContext {
  const state = ctx.decoded.responses;
  return {
    gatewayModel: ctx.model,
    includeUsage: ctx.decoded.includeUsage,
    ...(state
      ? { response: { id: ctx.id, store: state.store, previousResponseId: state.previousResponseId ?? null } }
      : {}),
  };
}

/**
 * One client wire format as the service sees it: a thin adapter over its translator so the
 * service handles all three formats with one code path.
 */
export interface ClientFormat {
  readonly name: ClientFormatName;
  readonly family: ErrorFamily;
  /** The id prefix of this format's responses. */
  readonly idPrefix: string;
  /** Set when an upstream of this same format can stream straight through. */
  readonly passthrough?: Passthrough;
  decode(body: unknown): DecodedClientRequest;
  encodeResponse(response: CanonicalResponse, ctx: EncodeContext): unknown;
  /** This format's stream encoder (see translators/common/stream-translator.ts). */
  encoder(ctx: EncodeContext): StreamTranslator<StreamEvent, string>;
}
