import type * as v from 'valibot';
import type { ModelConfig, ProviderConfig } from './config/config-schema.ts';
import type {
  CanonicalRequest,
  CanonicalResponse,
  StreamEvent,
  TranslationWarning,
} from '../translators/canonical/index.ts';
import type { CanonicalEmbeddingRequest, CanonicalEmbeddingResponse } from '../translators/embeddings/index.ts';
import type { ProviderResources } from './common/resources.ts';

/** What a provider is told about the model being called. */
export interface ModelRef {
  /** Gateway id (`acme/chat-large`): what clients see, and what responses must name. */
  id: string;
  /** The upstream's own model name. */
  upstreamModel: string;
}

export interface LlmCall {
  request: CanonicalRequest;
  model: ModelRef;
  /** Aborted when the client goes away: the upstream request is cancelled at once. */
  signal: AbortSignal;
  /**
   * Set only for an adapter whose `passthroughFormat` is the client's own format: the request
   * already in that wire format (the client's body, conversation resolved, model still the
   * gateway's id). The adapter sends it instead of encoding `request`, so fields the gateway does
   * not model reach the upstream unchanged; `request` still describes the call.
   */
  wire?: { format: UpstreamStreamFormat; body: Record<string, unknown> };
  /** Told of every upstream HTTP attempt, retries included (`x-gateway-attempts`). */
  onAttempt?: () => void;
  /** The client's own request headers this upstream takes (`LlmAdapter.forwardedHeaders`), when any were sent. */
  headers?: Record<string, string>;
}

/** Upstream wire formats a provider can stream in; `canonical` when it emits canonical events itself. */
export type UpstreamStreamFormat = 'chat-completions' | 'anthropic-messages' | 'responses';

export type LlmStream =
  | { kind: 'wire'; format: UpstreamStreamFormat; body: ReadableStream<Uint8Array>; warnings: TranslationWarning[] }
  | { kind: 'canonical'; events: ReadableStream<StreamEvent>; warnings: TranslationWarning[] };

/** A non-streamed answer: decoded, and as the upstream sent it. */
export interface LlmGenerated {
  response: CanonicalResponse;
  warnings: TranslationWarning[];
  /** The upstream's own body when the call was passed through (`call.wire` set). */
  wire?: Record<string, unknown>;
  /**
   * The upstream's body text in its wire format, for a client of that format to receive as it
   * is (model renamed), as streams are passed through.
   */
  raw?: { format: UpstreamStreamFormat; text: string };
}

export interface LlmAdapter {
  generate(call: LlmCall): Promise<LlmGenerated>;
  stream(call: LlmCall): Promise<LlmStream>;
  /**
   * The request's input tokens as the upstream counts them (`POST /v1/messages/count_tokens`).
   * Without it the gateway counts them itself (src/llm/token-counter.ts).
   */
  countTokens?(call: LlmCall): Promise<{ inputTokens: number; warnings: TranslationWarning[] }>;
  /** A client speaking this wire format has its own request body sent upstream (see `LlmCall.wire`). */
  passthroughFormat?: UpstreamStreamFormat;
  /**
   * Request headers of this upstream's own API that a client speaking it sends and the upstream
   * must receive (Anthropic's `anthropic-beta`: the features a call opts into). Handed over in
   * `LlmCall.headers` only when the client's format is `format`.
   */
  forwardedHeaders?: { format: UpstreamStreamFormat; names: readonly string[] };
}

export interface EmbeddingCall {
  request: CanonicalEmbeddingRequest;
  model: ModelRef;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** A provider's embedding models (`category: embedding`, `POST /v1/embeddings`). */
export interface EmbeddingAdapter {
  /** Vectors in input order; a `dimensions` the model cannot give throws InvalidRequestError naming it. */
  embed(call: EmbeddingCall): Promise<{ response: CanonicalEmbeddingResponse; warnings: TranslationWarning[] }>;
}

/** What a media job produced: bytes in hand, or a URL the gateway copies into its storage. */
export type MediaOutput =
  | { kind: MediaKind; body: Uint8Array; contentType: string }
  | { kind: MediaKind; url: string; contentType?: string };

export type MediaKind = 'image' | 'video' | 'audio';

/**
 * One step of a media job (start, then polls). `operation` is opaque to the gateway: it is stored
 * on the task row and handed back to `poll`, so any instance can resume a job after a crash.
 */
export type JobStep =
  | { state: 'running'; operation: unknown; pollAfterMs: number }
  | { state: 'succeeded'; outputs: MediaOutput[] }
  | { state: 'failed'; message: string; detail?: unknown };

export interface MediaJob {
  taskId: string;
  model: ModelRef;
  /** The validated input (the schema's output). */
  input: Record<string, unknown>;
  /** Aborted when the instance stops or the job's deadline passes. */
  signal: AbortSignal;
}

/** A custom voice the caller made with `POST /v1/resources/<provider>/voices`. */
export interface CustomVoiceRef {
  voice_id: string;
  name: string;
}

/** What a model's `validate` hook may ask the gateway about the caller. */
export interface MediaValidationContext {
  accountId: number;
  /** The caller's own custom voice of this provider; undefined for an unknown id or another account's. */
  customVoice(voiceId: string): Promise<CustomVoiceRef | undefined>;
}

/** A problem `validate` found; `path` is inside `input` (`voice_id`), the gateway adds `input.`. */
export interface MediaInputIssue {
  path: string;
  message: string;
}

export interface MediaModel {
  /** Validates the client's `input`; its issues name the field (422). */
  schema: v.GenericSchema<unknown, Record<string, unknown>>;
  /**
   * Checks no static schema can: what depends on the caller (their custom voices). Runs on the
   * schema's output at creation and on dry runs; any issue is a 422.
   */
  validate?(input: Record<string, unknown>, ctx: MediaValidationContext): Promise<MediaInputIssue[]>;
  /** USD charged at creation: the price, or its ceiling when the output count is the model's choice. */
  price(input: Record<string, unknown>): number;
  /** USD finally due once the outputs are known; defaults to `price`. The difference is refunded. */
  finalPrice?(input: Record<string, unknown>, outputs: MediaOutput[]): number;
  start(job: MediaJob): Promise<JobStep>;
  poll(job: MediaJob, operation: unknown): Promise<JobStep>;
  /** A job still running after this long fails (and is cancelled upstream where possible). */
  deadlineMs?: number;
  cancel?(job: MediaJob, operation: unknown): Promise<void>;
}

export interface MediaAdapter {
  /** The model behind a catalog entry of this provider, or undefined when it has none. */
  model(config: ModelConfig): MediaModel | undefined;
  /** Receives the upstream's own completion webhooks (`POST /upstream-webhooks/<provider id>`). */
  webhook?: UpstreamWebhook;
}

/** An upstream's webhook as it reached the gateway: the raw body, since signatures cover its bytes. */
export interface UpstreamWebhookRequest {
  url: URL;
  headers: Headers;
  body: string;
}

/**
 * What a verified webhook says: `result` is stored on the task's operation as `webhook` (only
 * while the task is processing and its `operation.id` is `operationId`), then the task's next
 * `poll` step finishes it — so a webhook never finishes a task itself and racing polls are harmless.
 */
export type UpstreamWebhookOutcome =
  | { accepted: true; taskId: string; operationId: string; result: unknown }
  /** Verified but nothing to store (an event the gateway does not wait for). */
  | { accepted: true; ignored: string }
  | { accepted: false; status: 400 | 401; message: string };

export interface UpstreamWebhook {
  receive(request: UpstreamWebhookRequest): Promise<UpstreamWebhookOutcome>;
}

/** Recent upstream health of a provider, for `/readyz`. */
export interface ProviderHealth {
  /** Why the provider counts as failing now (recent consecutive upstream errors), else undefined. */
  failing(): string | undefined;
}

/** What the gateway tells provider factories about itself. */
export interface ProviderHost {
  /** `PUBLIC_URL`: the base of URLs the upstream may call back (webhooks). */
  publicUrl: string;
  /** False when `PUBLIC_URL` is loopback or private: upstream webhooks could not reach it. */
  publicUrlReachable: boolean;
}

/** A configured upstream: what it can do. */
export interface Provider {
  id: string;
  kind: string;
  llm?: LlmAdapter;
  embeddings?: EmbeddingAdapter;
  media?: MediaAdapter;
  /** Voice and motion presets etc. served under `/v1/resources/<id>/…` (docs/api-contract.md). */
  resources?: ProviderResources;
  /** Recent upstream failures, reported on `/readyz`. */
  health?: ProviderHealth;
}

export type ProviderFactory = (config: ProviderConfig, host?: ProviderHost) => Provider;
