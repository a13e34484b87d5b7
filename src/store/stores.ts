/**
 * The database as the rest of Stride sees it: one narrow store per capability, made once from the
 * open database (src/server.ts, src/cli/commands.ts). Protocol, domain and page code take these;
 * no module outside store/ and db/ holds a database handle, writes SQL or opens a transaction.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { declarationOf, SUM_METRIC_NAMES, type SumMetric } from '../db/series-metrics.js';
import type { ConnectionCounts } from '../metrics.js';
import { createAppStore, type AppStore } from './apps.js';
import { createBodyWeightStore, type BodyWeightStore } from './body-weight.js';
import { createBearerLookup, type BearerLookup } from './bearer-lookup.js';
import { createCodeStore, type CodeStore } from './codes.js';
import { createDeviceCodeStore, type DeviceCodeStore } from './device-codes.js';
import { createFitbitSubscriptionStore, type FitbitSubscriptionStore } from './fitbit-subscriptions.js';
import { createPushedRequestStore, type PushedRequestStore } from './pushed-requests.js';
import { createRegistrationTokenStore, type RegistrationTokenStore } from './registration-tokens.js';
import { createGrantStore, type GrantStore } from './grants.js';
import { createRefreshRotation, type RefreshRotation } from './refresh-rotation.js';
import { serverSecretOnDemand, type ServerSecretName } from './server-secrets.js';
import { createPasswordResetStore, type PasswordResetStore } from './password-resets.js';
import { createSessionStore, type SessionStore } from './sessions.js';
import { replicaPosition, replicaRoutedSums } from './replica.js';
import { SUMS_OF, type SeriesSums } from './series-sums.js';
import type { DayReader } from './series-days.js';
import { createSeriesWriter, type HeartRateMinute, type MinuteSample, type SeriesWriter } from './series-writer.js';
import type { HeartRateDayReader } from './heart-rate-series.js';
import { postgresDays } from './postgres/series-days.js';
import { sqliteDays } from './sqlite/series-days.js';
import { createSleepStore, type SleepStore } from './sleep.js';
import { createTakeoutImportStore, type TakeoutImportStore } from './takeout-imports.js';
import { createSummaryStore, type SummaryStore } from './daily-summary.js';
import { createDpopProofStore, type DpopProofStore } from './dpop-proofs.js';
import { sweepExpired, type SweepResult } from './sweep.js';
import { runPendingRestrides } from './stride-changes.js';
import { createTestPeopleStore, type TestPeopleStore } from './test-people.js';
import { createTokenStore, type TokenStore } from './tokens.js';
import { createWebhookStore, type WebhookStore } from './webhooks.js';
import { createUsageStore, type UsageStore } from './usage.js';
import { createUserStore, type UserStore } from './users.js';

/** A sum metric's store: its writes (store/series-writer.ts) and its sums per bucket of a plan (store/series-sums.ts), in stored units. */
export type MinuteSeriesStore = SeriesWriter<MinuteSample> & { sums: SeriesSums };

/** One store per sum metric of db/series-metrics.ts, by its name (`steps`, `distance`, `calories`, …). */
export type SumMetricStores = Readonly<Record<SumMetric, MinuteSeriesStore>>;

export interface Stores extends SumMetricStores {
  apps: AppStore;
  users: UserStore;
  passwordResets: PasswordResetStore;
  sessions: SessionStore;
  grants: GrantStore;
  codes: CodeStore;
  /** Device authorization requests (RFC 8628). */
  deviceCodes: DeviceCodeStore;
  /** Pushed authorization requests (RFC 9126). */
  pushedRequests: PushedRequestStore;
  /** RFC 7591 initial access tokens. */
  registrationTokens: RegistrationTokenStore;
  tokens: TokenStore;
  /** The refresh_token grant's reads and its rotation (RFC 9700 §4.14.2). */
  rotation: RefreshRotation;
  /** The bearer check of every resource API request. */
  bearer: BearerLookup;
  /** DPoP proofs seen within their window, across processes (RFC 9449 §11.1). */
  dpopProofs: DpopProofStore;
  /** Heart rate in the series store: its writes, and its day rows for a series (store/heart-rate-series.ts); read from the primary (no replica routing). */
  heartRate: SeriesWriter<HeartRateMinute> & { readDays: HeartRateDayReader };
  /** Sleep sessions, read from the primary. */
  sleep: SleepStore;
  /** Body weight measurements, read from the primary. */
  bodyWeight: BodyWeightStore;
  /** Imports of Google Takeout archives: their state, reports and leases (docs/takeout.md). */
  takeoutImports: TakeoutImportStore;
  /** What the daily summary reads of every kind, through the series' day reader; from the primary. */
  summary: SummaryStore;
  /** Webhook endpoints, their deliveries, and each app's event feed. */
  webhooks: WebhookStore;
  /** Each app's Fitbit-compatible subscriber and subscriptions. */
  fitbitSubscriptions: FitbitSubscriptionStore;
  /** Each app's usage counters and last errors, for its dashboard page. */
  usage: UsageStore;
  /** A developer's test people and the state of their made-up lives. */
  testPeople: TestPeopleStore;
  /**
   * The secret `name`, read (or made) when first needed and kept for the life of the process; a
   * failed read is not kept.
   */
  serverSecret(name: ServerSecretName, now: () => number): () => Promise<Buffer>;
  /**
   * Deletes expired codes, tokens and sessions, and events and finished deliveries made before
   * `eventsBefore`, in bounded batches (store/sweep.ts); returns how many of each.
   */
  sweepExpired(now: number, eventsBefore: number): Promise<SweepResult>;
  /**
   * Carries on the distance recomputations that stride-length changes left pending (a process
   * that stopped mid-way), `userId`'s alone when given (store/stride-changes.ts).
   */
  resumeStrideChanges(now: number, userId?: string): Promise<void>;
  /** True when a trivial query succeeds (`/readyz`). */
  isReachable(): Promise<boolean>;
  /** The PostgreSQL pool's connections by state; null on SQLite. */
  connections(): ConnectionCounts | null;
  close(): Promise<void>;
}

/**
 * `replica`: a streaming replica of a PostgreSQL `db` (DATABASE_REPLICA_URL), where step series are
 * read once it has the reader's latest upload (store/replica.ts).
 */
export function createStores(db: Db, replica?: Db): Stores {
  const primaryDays = db.dialect === 'sqlite' ? sqliteDays(db.executor) : postgresDays(db.pool);
  const replicaDays = replica?.pool ? { days: postgresDays(replica.pool), position: replicaPosition(replica.pool) } : null;
  const sumsOf = (make: (days: DayReader) => SeriesSums): SeriesSums =>
    replicaDays ? replicaRoutedSums(make(primaryDays), make(replicaDays.days), replicaDays.position) : make(primaryDays);
  const withReplica = replica !== undefined;
  const sumStores = Object.fromEntries(
    SUM_METRIC_NAMES.map((metric) => {
      const { accumulator } = declarationOf(metric);
      if (accumulator === 'heart-rate') throw new Error(`${metric}: a sum metric needs the accumulator of sums`);
      return [metric, { ...createSeriesWriter(db, metric, withReplica), sums: sumsOf((days) => SUMS_OF[accumulator](days, metric)) }];
    }),
  ) as Record<SumMetric, MinuteSeriesStore>;
  return {
    ...sumStores,
    apps: createAppStore(db),
    users: createUserStore(db),
    passwordResets: createPasswordResetStore(db),
    sessions: createSessionStore(db),
    grants: createGrantStore(db),
    codes: createCodeStore(db),
    deviceCodes: createDeviceCodeStore(db),
    pushedRequests: createPushedRequestStore(db.kysely),
    registrationTokens: createRegistrationTokenStore(db.kysely),
    tokens: createTokenStore(db),
    rotation: createRefreshRotation(db),
    bearer: createBearerLookup(db),
    dpopProofs: createDpopProofStore(db),
    heartRate: { ...createSeriesWriter(db, 'heartrate'), readDays: (userId, from, to, detail) => primaryDays(userId, 'heartrate', from, to, detail) },
    sleep: createSleepStore(db),
    bodyWeight: createBodyWeightStore(db),
    takeoutImports: createTakeoutImportStore(db),
    summary: createSummaryStore(db, primaryDays),
    webhooks: createWebhookStore(db),
    fitbitSubscriptions: createFitbitSubscriptionStore(db.kysely),
    usage: createUsageStore(db),
    testPeople: createTestPeopleStore(db),
    serverSecret: (name, now) => serverSecretOnDemand(db.kysely, name, now),
    sweepExpired: (now, eventsBefore) => sweepExpired(db.kysely, db.dialect, now, eventsBefore),
    resumeStrideChanges: (now, userId) => runPendingRestrides(db, now, userId),
    async isReachable() {
      try {
        await sql`select 1`.execute(db.kysely);
        return true;
      } catch {
        return false;
      }
    },
    connections: () => (db.pool ? { total: db.pool.totalCount, idle: db.pool.idleCount, waiting: db.pool.waitingCount } : null),
    close: async () => {
      await replica?.close();
      await db.close();
    },
  };
}
