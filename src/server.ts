/** `stride serve`: migrate, listen, sweep expired rows, and shut down cleanly on SIGINT/SIGTERM. */
import type { Server } from 'node:http';
import { buildApp } from './app.js';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { serveMetrics } from './http/metrics.js';
import { createStores } from './store/stores.js';
import { createDeliveryWorker, startDeliveryLoop } from './webhooks/worker.js';
import { USAGE_FLUSH_SECONDS } from './http/usage.js';
import { advanceLiveSandbox, SANDBOX_STEP_SECONDS } from './domain/test-people.js';
import { archiveLimits, expireUnconfirmedImports } from './domain/takeout/imports.js';
import { startImportRunner } from './domain/takeout/runner.js';

/** Logged once when PostgreSQL's answers show a transaction-pooling proxy the settings did not name. */
const POOLING_FOUND =
  'PostgreSQL is behind a transaction-pooling proxy (prepared statements went missing between connections): statements are no longer prepared by name; set DATABASE_TRANSACTION_POOLING=true to say so from the start';

export async function serve(config: Config): Promise<void> {
  let checkpointsFailed: (error: Error) => void = () => undefined;
  let poolingFound = () => console.warn(POOLING_FOUND);
  const pooling = { transactionPooling: config.databaseTransactionPooling, onTransactionPoolingFound: () => poolingFound() };
  const db = openDatabase(config.databaseUrl, { ...pooling, backgroundCheckpoints: { onError: (error) => checkpointsFailed(error) } });
  await migrateToLatest(db);
  const stores = createStores(db, config.databaseReplicaUrl ? openDatabase(config.databaseReplicaUrl, pooling) : undefined);
  const app = await buildApp({ config, stores, clock: systemClock });
  // The sign-in forms' CSRF key is made now, while the database is known to be writable, rather
  // than by the first sign-in page (which a full disk would then refuse).
  await app.serverSecrets.preSessionCsrf();
  checkpointsFailed = (error) => app.log.warn({ err: error }, 'background WAL checkpoints stopped; the server connection checkpoints again');
  poolingFound = () => app.log.warn(POOLING_FOUND);

  const { metrics } = app.ctx;
  const sweep = async () => {
    try {
      const now = systemClock();
      const { deleted, batches, seconds, partitions } = await stores.sweepExpired(now, now - config.webhooks.eventRetentionSeconds);
      await stores.resumeStrideChanges(now);
      // Uploaded Takeout archives never confirmed: removed, their imports marked expired.
      const expiredImports = (await expireUnconfirmedImports(stores, now, config.takeout.unconfirmedKeptSeconds)).length;
      metrics.sweeps.inc({ outcome: 'succeeded' });
      for (const [table, rows] of Object.entries(deleted)) metrics.sweptRows.inc({ table }, rows);
      app.log.info({ swept: deleted, partitions, expiredImports, batches, seconds: Math.round(seconds * 1000) / 1000 }, 'swept expired rows');
    } catch (error) {
      metrics.sweeps.inc({ outcome: 'failed' });
      app.log.error({ err: error }, 'sweeping expired rows failed');
    }
  };
  const timer = setInterval(sweep, config.sweepInterval * 1000);
  timer.unref();
  void sweep();

  const flushUsage = () => app.usage.flush().catch((error: unknown) => app.log.warn({ err: error }, 'writing app usage failed; kept for the next try'));
  const usageTimer = setInterval(flushUsage, USAGE_FLUSH_SECONDS * 1000);
  usageTimer.unref();

  // SANDBOX_LIVE: test people whose developer listens for webhooks live on by themselves.
  const advanceSandbox = () =>
    advanceLiveSandbox(stores, systemClock(), { days: config.sandbox.days, coalesceSeconds: config.webhooks.coalesceSeconds }).catch((error: unknown) =>
      app.log.warn({ err: error }, 'advancing the sandbox clock failed; it tries again at its next step'),
    );
  const sandboxTimer = config.sandbox.live ? setInterval(advanceSandbox, SANDBOX_STEP_SECONDS * 1000) : undefined;
  sandboxTimer?.unref();

  const deliveries = startDeliveryLoop(createDeliveryWorker(app.ctx, app.log), app.log);
  // Takeout imports queued on any process, or left running by one that stopped (docs/takeout.md).
  const imports = startImportRunner(stores, {
    leaseSeconds: config.takeout.leaseSeconds,
    coalesceSeconds: config.webhooks.coalesceSeconds,
    limits: archiveLimits(config.takeout.maxArchiveBytes),
    clock: systemClock,
    onError: (error) => app.log.warn({ err: error }, 'a Takeout import stopped on an error; it is carried on once its lease runs out'),
  });
  let metricsServer: Server | undefined;
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    clearInterval(timer);
    clearInterval(usageTimer);
    clearInterval(sandboxTimer);
    metricsServer?.close();
    await deliveries.stop();
    await imports.stop();
    await app.close();
    await flushUsage();
    await stores.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  if (config.metrics.port !== undefined) metricsServer = await serveMetrics(metrics.registry, config.metrics.port, '127.0.0.1');
  if (config.trustProxy === true) app.log.warn(TRUST_EVERY_PROXY);
  await app.listen({ port: config.port, host: config.host });
  app.log.info(`Stride is serving ${config.publicUrl} (database: ${describeDatabase(config.databaseUrl)})`);
}

/** TRUST_PROXY=true is safe only behind a proxy that replaces X-Forwarded-For; most append to it. */
export const TRUST_EVERY_PROXY =
  'TRUST_PROXY=true takes the client address from the left of X-Forwarded-For, which the client writes itself unless your proxy replaces the header: anyone can then escape the per-address limits. Name your proxies instead (TRUST_PROXY=10.0.0.5 or a CIDR; docs/configuration.md)';

/** The database URL without its password, for logs. */
export function describeDatabase(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return databaseUrl;
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'postgres';
  }
}
