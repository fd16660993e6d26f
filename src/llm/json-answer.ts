import type { LlmGenerated } from '../../providers/types.ts';
import type { TranslationWarning } from '../../translators/canonical/index.ts';
import { bodyWithId } from '../../translators/passthrough/index.ts';
import { passthroughContext, type ClientFormat, type EncodeContext } from './client-format.ts';

/** A non-streamed answer as the client receives it. */
export interface JsonAnswer {
  /** The body text. */
  text: string;
  /** The same as an object, when the gateway built it (a Responses answer it may store). */
  json?: unknown;
  /** The id the client sees is the upstream's (passed through as written), not `ctx.id`. */
  idFromUpstream: boolean;
  /** What the answer lost on the way (a body that could not be passed through). */
  warnings?: TranslationWarning[];
}

/**
 * The body of a non-streamed answer, the way streams are answered: an upstream of the client's
 * own format is passed through (chat and Messages as the upstream wrote them, model renamed;
 * Responses with its id, model and conversation state renamed), any other is encoded from the
 * decoded response. A same-format body the gateway cannot write again (nested deeper than
 * `JSON.stringify` goes, though `JSON.parse` read it) is encoded from the decoded response too:
 * the client gets a well-formed answer rather than an error for the upstream's oddity.
 */
export function jsonAnswer(format: ClientFormat, generated: LlmGenerated, ctx: EncodeContext): JsonAnswer {
  let warnings: TranslationWarning[] | undefined;
  try {
    const passed = passedThrough(format, generated, ctx);
    if (passed) return passed;
  } catch (err) {
    // Lossy: fields only the upstream's body had are gone, and the client is told.
    warnings = [
      {
        type: 'other',
        message: `the upstream's answer could not be passed through as written (${(err as Error).message ?? String(err)}); it is answered as the gateway encodes it`,
      },
    ];
  }
  const json = format.encodeResponse({ ...generated.response, id: ctx.id, model: ctx.model }, ctx);
  return { text: JSON.stringify(json), json, idFromUpstream: false, ...(warnings ? { warnings } : {}) };
}

/** The upstream's own answer, renamed, when it is of the client's format; else undefined. */
function passedThrough(format: ClientFormat, generated: LlmGenerated, ctx: EncodeContext): JsonAnswer | undefined {
  const passthrough = format.passthrough;
  const { wire, raw, response } = generated;
  if (wire && passthrough?.response) {
    const json = passthrough.response(wire, passthroughContext(ctx));
    return { text: JSON.stringify(json), json, idFromUpstream: false };
  }
  const forwardBody = passthrough?.rules.forwardBody;
  if (raw && forwardBody && raw.format === passthrough.format) {
    const keepsId = passthrough.rules.keepsUpstreamId;
    const text = forwardBody(raw.text, passthroughContext(ctx));
    // An upstream that sent no id: the answer gets the one its record keeps (fill-missing-id.ts).
    return { text: keepsId ? bodyWithId(text, response.id) : text, idFromUpstream: keepsId };
  }
  return undefined;
}
