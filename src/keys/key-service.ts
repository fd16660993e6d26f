import { toUnits, unitsToUsd } from '../accounts/money.ts';
import type { KeyCache } from '../auth/key-cache.ts';
import type { Db } from '../db/database.ts';
import { conflict, notFound } from '../http/errors.ts';
import { parseOr422 } from '../http/parse.ts';
import {
  lockAndCountActiveKeys,
  findKey,
  insertKey,
  type KeyRecord,
  type KeySettings,
  listKeys,
  revokeKey,
  updateKey,
} from './api-keys.repository.ts';
import { CreateKeyBody, KeyIdParam, UpdateKeyBody, type UpdateKeyInput } from './key-settings.ts';

/** Active API keys one account may have (docs/keys.md). */
export const MAX_KEYS_PER_ACCOUNT = 1_000;

/** Key ids are Postgres `integer`s: a larger one names no key (and must never reach a query). */
const MAX_KEY_ID = 2_147_483_647;
const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** A key as the API shows it (never the key itself): docs/keys.md. */
export function keyView(r: KeyRecord) {
  return {
    id: r.id,
    name: r.name,
    key_prefix: r.keyPrefix,
    created_at: seconds(r.createdAt),
    last_used_at: seconds(r.lastUsedAt),
    expires_at: r.expiresAt,
    budget_usd: r.budget === null ? null : unitsToUsd(r.budget),
    budget_period: r.budgetPeriod,
    models: r.models,
    rpm: r.rpm,
    tpm: r.tpm,
    spend_usd: unitsToUsd(r.spend),
    period_start: seconds(r.periodStart),
  };
}
export type KeyView = ReturnType<typeof keyView>;

function toSettings(input: UpdateKeyInput): Partial<KeySettings> {
  return {
    name: input.name,
    budget: input.budget_usd === undefined ? undefined : input.budget_usd === null ? null : toUnits(input.budget_usd),
    budgetPeriod: input.budget_period,
    models: input.models === undefined ? undefined : input.models && [...new Set(input.models)],
    rpm: input.rpm,
    tpm: input.tpm,
    expiresAt: input.expires_at,
  };
}

/**
 * Managing an account's keys, for the self-service routes, the admin routes and the admin CLI
 * alike. Every change to a key (settings or revocation) is announced through the key cache, so
 * every instance applies it to the key's next request.
 */
export class KeyService {
  constructor(
    private readonly db: Db,
    private readonly keys: Pick<KeyCache, 'revoke'>,
  ) {}

  /** The key id of a path segment; 404 for one that cannot exist. */
  keyId(raw: string): number {
    const digits = parseOr422(KeyIdParam, raw, 'key id');
    const id = Number(digits);
    if (id > MAX_KEY_ID) throw notFound(`key ${digits} not found`);
    return id;
  }

  async list(accountId: number): Promise<KeyView[]> {
    return (await listKeys(this.db, accountId)).map(keyView);
  }

  async get(accountId: number, id: number): Promise<KeyView> {
    const record = await findKey(this.db, accountId, id);
    if (!record) throw notFound(`key ${id} not found`);
    return keyView(record);
  }

  async create(accountId: number, body: unknown): Promise<KeyView & { key: string }> {
    const input = parseOr422(CreateKeyBody, body);
    const settings = toSettings(input);
    // Every key is cached on every instance that sees it, with its model list, and listed whole
    // by GET /v1/keys: 3,000 keys of 100 models each took 66 MB of cache and a 61 MB list. The
    // account's row is locked around the count and the insert, so creates at once count each other.
    const { key, record } = await this.db.transaction().execute(async (trx) => {
      if ((await lockAndCountActiveKeys(trx, accountId)) >= MAX_KEYS_PER_ACCOUNT)
        throw conflict(`an account has at most ${MAX_KEYS_PER_ACCOUNT} active API keys; revoke one first`);
      return insertKey(trx, accountId, {
        name: input.name,
        budget: settings.budget ?? null,
        budgetPeriod: settings.budgetPeriod ?? null,
        models: settings.models ?? null,
        rpm: settings.rpm ?? null,
        tpm: settings.tpm ?? null,
        expiresAt: settings.expiresAt ?? null,
      });
    });
    return { ...keyView(record), key };
  }

  /** `selfId`: the key making the change, which may not put on itself limits that would end its right to make it. */
  async update(accountId: number, id: number, body: unknown, selfId?: number): Promise<KeyView> {
    const input = parseOr422(UpdateKeyBody, body);
    const settings = toSettings(input);
    if (id === selfId && (settings.models || settings.budget != null || settings.expiresAt != null))
      throw conflict(
        'a key cannot give itself a model list, a budget or an expiry: it could then no longer manage keys; make the change with another key without them',
      );
    const record = await updateKey(this.db, accountId, id, settings);
    if (!record) throw notFound(`key ${id} not found`);
    // Every instance reloads the key's settings on its next request.
    await this.keys.revoke([record.keyHash]);
    return keyView(record);
  }

  async revoke(accountId: number, id: number): Promise<{ id: number; revoked: true }> {
    const hash = await revokeKey(this.db, accountId, id);
    if (!hash) throw notFound(`key ${id} not found`);
    // Refused on every instance before we answer.
    await this.keys.revoke([hash]);
    return { id, revoked: true };
  }
}
