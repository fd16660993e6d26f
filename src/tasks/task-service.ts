import * as v from 'valibot';
import { toUnits } from '../accounts/money.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import { EnvelopeError, forbidden, insufficientBalance, unprocessable } from '../http/errors.ts';
import { keyBudgetMessage, modelAllowed, modelNotAllowedMessage } from '../keys/key-policy.ts';
import { formatIssues } from '../http/validation.ts';
import { type CustomVoiceLookup, NO_CUSTOM_VOICES } from '../resources/custom-voices.repository.ts';
import type { CreateTaskRequest } from './create-request.ts';
import type { MediaRegistry, ResolvedMediaModel } from './media-registry.ts';
import { requestHash } from './request-hash.ts';
import { validationContext } from './caller-checks.ts';
import { beyondMaxPriceMessage, taskPrice } from './task-price.ts';
import type { TaskAdmitter } from './task-admission.ts';
import type { DbOrTrx } from '../db/database.ts';
import type { TaskRow } from '../db/tables/tasks.table.ts';
import { findTaskByIdempotencyKey } from './tasks.repository.ts';

/**
 * Longest task input, as JSON text. Model schemas bound the fields they declare (strings default
 * to providers/common/input-schema.ts's DEFAULT_MAX_STRING_LENGTH); this bounds the rest, which
 * pass through to the upstream and are stored on the task row.
 */
export const MAX_INPUT_JSON_CHARS = 1_000_000;

/** Refuses a URL the gateway must not call (private address, bad scheme); throws with the reason. */
export type UrlCheck = (url: string) => Promise<void>;

/** `replayed`: an earlier create under the same Idempotency-Key made the task (not part of the body). */
export type CreateResult = { task_id: string; status: 'processing'; replayed?: true } | { cost: number };

/**
 * Creating a media task (docs/api-contract.md): the model must be a media model of
 * the catalog, the input must pass its provider's schema, the callback URL must be public, and
 * the price is charged atomically with the insert. A dry run stops after pricing.
 */
export class TaskService {
  constructor(
    readonly registry: MediaRegistry,
    private readonly admitter: TaskAdmitter,
    private readonly checkCallbackUrl: UrlCheck,
    private readonly onCreated: () => void,
    /** The callers' own custom voices, for models' `validate` hooks. */
    private readonly customVoices: CustomVoiceLookup = NO_CUSTOM_VOICES,
  ) {}

  resolve(modelId: string, catalogHas: (id: string) => string | undefined): ResolvedMediaModel {
    const model = this.registry.get(modelId);
    if (model) return model;
    const category = catalogHas(modelId);
    if (category === 'llm')
      throw unprocessable(`model: ${modelId} is an LLM; use POST /v1/chat/completions, /v1/responses or /v1/messages`);
    if (category === 'embedding')
      throw unprocessable(`model: ${modelId} is an embedding model; use POST /v1/embeddings`);
    throw unprocessable(`model: unknown model ${modelId}`);
  }

  async create(
    auth: AuthContext,
    req: CreateTaskRequest,
    model: ResolvedMediaModel,
    idempotencyKey?: string,
    requestId?: string,
  ): Promise<CreateResult> {
    if (auth.policy && !modelAllowed(auth.policy.models, model.ref.id))
      throw forbidden(modelNotAllowedMessage(model.ref.id));
    if (JSON.stringify(req.input).length > MAX_INPUT_JSON_CHARS)
      throw unprocessable(`input: must be at most ${MAX_INPUT_JSON_CHARS} characters of JSON`);
    const parsed = v.safeParse(model.media.schema, req.input);
    if (!parsed.success)
      throw unprocessable(
        formatIssues(
          parsed.issues.map((issue) => ({ ...issue, path: [{ key: 'input' } as never, ...(issue.path ?? [])] })),
        ),
      );
    const issues =
      (await model.media.validate?.(parsed.output, validationContext(this.customVoices, model, auth.accountId))) ?? [];
    if (issues.length) throw unprocessable(issues.map((issue) => `input.${issue.path}: ${issue.message}`).join('; '));
    if (req.callbackUrl) {
      try {
        await this.checkCallbackUrl(req.callbackUrl);
      } catch (err) {
        // The guard's message names the field (`callback_url: resolves to a private address …`).
        throw unprocessable((err as Error).message);
      }
    }
    const price = taskPrice(model.media.price(parsed.output));
    if (price === undefined) throw unprocessable(beyondMaxPriceMessage);
    if (req.dryRun) return { cost: price };

    const taskId = crypto.randomUUID();
    const result = await this.admitter.admit({
      taskId,
      accountId: auth.accountId,
      keyId: auth.keyId,
      model: model.ref.id,
      provider: model.entry.provider.id,
      category: model.entry.object.category,
      input: req.input,
      callbackUrl: req.callbackUrl ?? null,
      requestId: requestId ?? null,
      charge: toUnits(price),
      idempotency: idempotencyKey
        ? { key: idempotencyKey, hash: idempotencyHash({ ...req, model: model.ref.id }) }
        : undefined,
    });
    switch (result.kind) {
      case 'created':
        this.onCreated();
        return { task_id: result.taskId, status: 'processing' };
      case 'replayed':
        return { task_id: result.taskId, status: 'processing', replayed: true };
      case 'insufficient_balance':
        throw insufficientBalance();
      case 'key_budget_exceeded':
        throw new EnvelopeError(402, keyBudgetMessage);
      case 'idempotency_conflict':
        throw idempotencyConflict();
      default: {
        const exhaustive: never = result;
        throw new Error(`unknown admission result ${JSON.stringify(exhaustive)}`);
      }
    }
  }
}

/** What an Idempotency-Key is bound to. `req.model` is the resolved model's id on both create routes. */
const idempotencyHash = (req: CreateTaskRequest) =>
  requestHash({ model: req.model, input: req.input, callbackUrl: req.callbackUrl });

/**
 * A retry of a create whose task already exists: the task under the same `Idempotency-Key`,
 * as it is now (its status, output and cost may have moved on). Looked up before the body is
 * validated against the model, so a replay answers the same task even after the model's rules
 * (or the model itself) changed. The same key with another body is a 422, as at admission.
 * Undefined when the key names no task yet (the admitter settles races between first tries).
 */
export async function findIdempotentReplay(
  db: DbOrTrx,
  accountId: number,
  req: CreateTaskRequest,
  idempotencyKey: string | undefined,
): Promise<TaskRow | undefined> {
  if (!idempotencyKey || req.dryRun) return undefined;
  const row = await findTaskByIdempotencyKey(db, accountId, idempotencyKey);
  if (!row) return undefined;
  if (row.request_hash !== idempotencyHash(req)) throw idempotencyConflict();
  return row;
}

const idempotencyConflict = () => new EnvelopeError(422, 'Idempotency-Key: already used with a different request body');
