import pg from 'pg';

/**
 * The real services integration tests run against. On CI (and by default) they must be
 * reachable: a test that needs Postgres or Redis fails loudly instead of skipping.
 */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh database per gateway group, so test files never see each other's rows. */
export async function createTestDatabase(label: string): Promise<string> {
  const name = `gw_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(
      `Postgres is required for integration tests and is not reachable at ${POSTGRES_URL}: ${(err as Error).message}`,
    );
  }
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function queryDatabase<T extends pg.QueryResultRow>(
  databaseUrl: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Drops databases made by `createTestDatabase`, best effort: they are uniquely named and harmless
 * if left behind (a benchmark stopped by a signal cleans up what it can).
 */
export async function dropTestDatabases(urls: readonly string[]): Promise<void> {
  if (urls.length === 0) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  try {
    await client.connect();
    for (const url of urls)
      await client.query(`drop database if exists "${new URL(url).pathname.slice(1)}" with (force)`);
  } catch {
    // best effort, as said above
  } finally {
    await client.end().catch(() => {});
  }
}
