import { sqlState, UNIQUE_VIOLATION } from '../db/db-errors.ts';
import { AccountCache } from '../accounts/account-cache.ts';
import { BalanceReservations } from '../accounts/balance-reservations.ts';
import { countAccounts, createAccount } from '../accounts/accounts.repository.ts';
import { toUnits } from '../accounts/money.ts';
import { KeyCache } from '../auth/key-cache.ts';
import { buildCatalog } from '../catalog/catalog.ts';
import { ConfigError } from '../config/config-error.ts';
import { loadEnv, type Env } from '../config/env.ts';
import { useUpstreamClient } from '../../providers/common/upstream-transport.ts';
import { loadGatewayConfig } from '../config/gateway-config.ts';
import { connectDatabase, type DatabaseHandle } from '../db/connect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { Logger } from '../ops/logger.ts';
import { RateLimiter } from '../ops/rate-limiter.ts';
import { connectStore } from '../store/connect.ts';
import { connectStorage } from '../storage/connect.ts';
import { FileStore } from '../storage/file-store.ts';
import { createProviders, isProviderKind } from '../../providers/registry.ts';
import type { EmbeddingAdapter, LlmAdapter, Provider } from '../../providers/types.ts';
import { EmbeddingService } from '../embeddings/embedding-service.ts';
import { TokenCountService } from '../llm/count-tokens.ts';
import { LlmService } from '../llm/llm-service.ts';
import { ResponseCache } from '../llm/response-cache.ts';
import { DeploymentHealth } from '../routing/deployment-health.ts';
import { Router } from '../routing/router.ts';
import { RoutingTable } from '../routing/routing-table.ts';
import { UsageRecorder } from '../llm/usage-recorder.ts';
import { SettlementJournal } from '../llm/settlement-journal.ts';
import { replayJournal } from '../llm/journal-replay.ts';
import { readSettlementsWith } from '../observability/metrics.ts';
import { KeyBudgets } from '../keys/key-budgets.ts';
import { KeyUsage } from '../keys/key-usage.ts';
import { KeyRateLimits } from '../keys/key-rate-limits.ts';
import { LlmKeyGate } from '../keys/llm-key-gate.ts';
import type { AppContext } from './context.ts';
import { createTaskServices, type TaskServices } from './task-services.ts';
import { taskOutputStore } from '../tasks/save-task-output.ts';
import { providerHost } from '../upstreams/provider-host.ts';

export interface Started {
  ctx: AppContext;
  services: {
    providers: ReadonlyMap<string, Provider>;
    router: Router;
    llm: LlmService;
    embeddings: EmbeddingService;
    tokenCount: TokenCountService;
    usage: UsageRecorder;
    reservations: BalanceReservations;
    /** LLM holds on API key budgets (renewed and swept in the background). */
    keyBudgets: KeyBudgets;
  } & TaskServices;
  database: DatabaseHandle;
  /** Set on the very first start only: the key of the account created then. */
  firstKey?: { email: string; apiKey: string; balanceUsd: number };
}

/** Everything before listening: env, config, database + migrations, store, catalog, caches. */
export async function bootstrap(source: Record<string, string | undefined> = process.env): Promise<Started> {
  const env: Env = loadEnv(source);
  useUpstreamClient(env.upstreamHttpClient);
  const config = await loadGatewayConfig(env.gatewayConfigPath, source);
  config.providers.forEach((p, i) => {
    if (!isProviderKind(p.kind))
      throw new ConfigError(`${env.gatewayConfigPath}: providers[${i}].kind: unknown adapter "${p.kind}"`);
  });
  // With several workers every line names the process that wrote it (docs/scaling.md).
  const log = new Logger(
    env.logLevel,
    undefined,
    env.workers > 1 ? { worker: env.workerIndex, pid: process.pid } : undefined,
  );
  const database = await connectDatabase({
    databaseUrl: env.databaseUrl,
    dataDir: env.dataDir,
    poolSize: env.databasePoolSize,
    log,
  });
  // Workers are spawned once the primary has migrated: the schema is current before they start.
  const primary = env.workerIndex === 0;
  const applied = primary ? await migrateToLatest(database.db) : [];
  if (applied.length) log.info('migrations applied', { migrations: applied });
  const store = await connectStore(env.redisUrl, env.redisKeyPrefix);
  const catalog = await buildCatalog(database.db, config);
  const keys = new KeyCache(database.db, store);
  const accounts = new AccountCache(database.db, store);
  await Promise.all([keys.start(), accounts.start()]);
  const storage = connectStorage(env);

  const ctx: AppContext = {
    env,
    config,
    db: database.db,
    dbKind: database.kind,
    store,
    catalog,
    keys,
    keyUsage: new KeyUsage(database.db, log),
    accounts,
    rateLimiter: new RateLimiter(store),
    keyLimits: new KeyRateLimits(store, Date.now, log),
    storage,
    files: new FileStore(database.db, storage, { uploadUrl: env.uploadUrl, maxBytes: env.maxUploadBytes }),
    log,
    requestAccount: new WeakMap(),
  };

  const providers = createProviders(config.providers, providerHost(env.publicUrl));
  const llmAdapters = new Map<string, LlmAdapter>();
  for (const [id, provider] of providers) if (provider.llm) llmAdapters.set(id, provider.llm);
  const embeddingAdapters = new Map<string, EmbeddingAdapter>();
  for (const [id, provider] of providers) if (provider.embeddings) embeddingAdapters.set(id, provider.embeddings);
  const table = new RoutingTable(
    catalog,
    config.providers,
    (p, entry) => (entry.object.category === 'llm' ? llmAdapters.has(p.id) : Boolean(providers.get(p.id)?.media)),
    env.gatewayConfigPath,
  );
  const router = new Router(table, new DeploymentHealth(store, log));
  await router.health.start(table.all());
  const reservations = new BalanceReservations(database.db, log, {}, database.prepared);
  const keyBudgets = new KeyBudgets(database.db, log);
  // An edited or revoked key's budget lease is retired on every instance at once (docs/keys.md).
  keys.onChange((keyId) => keyBudgets.retire([keyId]));
  // The journal's left-over calls are settled before this process serves or grants a hold.
  const journal = env.settlementJournal
    ? SettlementJournal.open(env.settlementJournalDir, env.workerIndex, env.settlementJournalSegmentBytes)
    : undefined;
  if (journal) {
    // The primary also settles the files of worker slots this run does not have (fewer WORKERS).
    const orphans = primary ? SettlementJournal.openOrphans(env.settlementJournalDir, env.workers) : [];
    for (const j of [journal, ...orphans]) await replayJournal(database.db, database.prepared, j, accounts, log);
    for (const orphan of orphans) orphan.close(true);
  }
  const usage = new UsageRecorder(
    database.db,
    accounts,
    reservations,
    log,
    undefined,
    database.prepared,
    keyBudgets,
    journal,
    env.settlementJournalMaxUnsettled,
  );
  if (journal) ctx.unsettled = (accountId) => usage.unsettled.settled(accountId);
  readSettlementsWith(() => ({
    unsettled: usage.unsettled.total,
    journal: usage.journaling,
    journalFileBytes: journal?.fileBytes ?? 0,
  }));
  const keyGate = new LlmKeyGate(keyBudgets, ctx.keyLimits);
  const services = {
    providers,
    router,
    llm: new LlmService(ctx, llmAdapters, usage, reservations, router, new ResponseCache(store, log), keyGate),
    embeddings: new EmbeddingService(ctx, embeddingAdapters, usage, reservations, keyGate),
    tokenCount: new TokenCountService(ctx, llmAdapters, keyGate),
    usage,
    reservations,
    keyBudgets,
    ...createTaskServices(ctx, providers, taskOutputStore(ctx), { fallbacks: (id) => table.fallbacks(id) }),
  };

  let firstKey: Started['firstKey'];
  if (primary && (await countAccounts(database.db)) === 0) {
    const email = 'owner@localhost';
    try {
      const { apiKey } = await createAccount(database.db, { email, balance: toUnits(env.initialBalanceUsd) });
      firstKey = { email, apiKey, balanceUsd: env.initialBalanceUsd };
    } catch (err) {
      // Another instance starting at the same moment created it first; only one prints a key.
      // Anything else is a real failure, not to be swallowed on every start.
      if (sqlState(err) !== UNIQUE_VIOLATION) throw err;
    }
  }
  return { ctx, services, database, firstKey };
}
