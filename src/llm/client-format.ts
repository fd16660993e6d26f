import type {
  CanonicalRequest,
  CanonicalResponse,
  StreamEvent,
  TranslationWarning,
} from '../../translators/canonical/index.ts';
import type { PassthroughRules } from '../../translators/passthrough/index.ts';
import type { StreamTranslator } from '../../translators/shared/stream-translator.ts';
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
  readonly passthrough?: { format: UpstreamStreamFormat; rules: PassthroughRules };
  decode(body: unknown): DecodedClientRequest;
  encodeResponse(response: CanonicalResponse, ctx: EncodeContext): unknown;
  /** This format's stream encoder (see translators/shared/stream-translator.ts). */
  encoder(ctx: EncodeContext): StreamTranslator<StreamEvent, string>;
}
