/**
 * Device authorization requests (RFC 8628, docs/oauth.md "Device authorization"), kept only as the
 * SHA-256 of the device code and of the normalised user code. The common poll — pending, live, on
 * time, by the client it was issued to — is one conditional write of the poll's time by the
 * primary key (recordPendingPoll); any other poll reads the row, and writes the time of the poll
 * (and, when the device polls too fast, the raised interval).
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import type { Db } from '../db/database.js';
import type { Database, DeviceCodeTable } from '../db/schema.js';
import { claimAndInsertPair, type NewRefreshTokenRow, type NewTokenRow } from './tokens.js';

type Q = Kysely<Database>;
export type DeviceCode = Selectable<DeviceCodeTable>;

const selectByDeviceCode = preparedQuery((db: Q, hash: string) => db.selectFrom('device_codes').selectAll().where('device_code_hash', '=', hash));
const selectByUserCode = preparedQuery((db: Q, hash: string) => db.selectFrom('device_codes').selectAll().where('user_code_hash', '=', hash));

/**
 * The poll's time, only if the request is pending, live, the client's, and the device waited its
 * interval since its last poll (RFC 8628 §3.5): the database decides, so that polls reaching
 * different processes are paced alike.
 */
const markPendingPoll = preparedQuery((db: Q, now: number, hash: string, appId: string, liveAt: number, pacedAt: number) =>
  db
    .updateTable('device_codes')
    .set({ last_polled_at: now })
    .where('device_code_hash', '=', hash)
    .where('app_id', '=', appId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', liveAt)
    .where(sql<boolean>`(last_polled_at IS NULL OR last_polled_at + poll_interval <= ${pacedAt})`),
);

const markPolled = preparedQuery((db: Q, now: number, hash: string) =>
  db.updateTable('device_codes').set({ last_polled_at: now }).where('device_code_hash', '=', hash).where('status', '=', 'pending'),
);

/** RFC 8628 §3.5: the interval grows by 5 seconds at each slow_down, and holds for later polls. */
const markTooFast = preparedQuery((db: Q, now: number, hash: string) =>
  db
    .updateTable('device_codes')
    .set((eb) => ({ last_polled_at: now, poll_interval: eb('poll_interval', '+', 5) }))
    .where('device_code_hash', '=', hash),
);

const markDenied = preparedQuery((db: Q, hash: string, now: number) =>
  db.updateTable('device_codes').set({ status: 'denied' }).where('device_code_hash', '=', hash).where('status', '=', 'pending').where('expires_at', '>', now),
);

const markApproved = preparedQuery((db: Q, userId: string, grantId: string, scope: string, hash: string, now: number) =>
  db
    .updateTable('device_codes')
    .set({ status: 'approved', user_id: userId, grant_id: grantId, scope })
    .where('device_code_hash', '=', hash)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now),
);

/** The single use of an approved request: of concurrent polls exactly one sees true. */
const markUsed = preparedQuery((db: Q, hash: string, now: number) =>
  db.updateTable('device_codes').set({ status: 'used' }).where('device_code_hash', '=', hash).where('status', '=', 'approved').where('expires_at', '>', now),
);

/** In the consent's transaction (grants.ts, recordConsent): false when the request is no longer pending. */
export async function approveDeviceCode(db: Q, hash: string, approval: { userId: string; grantId: string; scope: string; now: number }): Promise<boolean> {
  const result = await markApproved(db, approval.userId, approval.grantId, approval.scope, hash, approval.now);
  return Number(result.numAffectedRows) === 1;
}

export interface DeviceCodeStore {
  /**
   * Stores a new request; false when its user code is one a stored request already has (the codes
   * are short, RFC 8628 §6.1: another may be drawn), and nothing was written.
   */
  insert(row: DeviceCode): Promise<boolean>;
  /**
   * A poll of `appId`'s pending, live request, at or past its interval: its time recorded, and
   * true. False (nothing written) for any other poll, which then reads the row.
   */
  recordPendingPoll(hash: string, appId: string, now: number): Promise<boolean>;
  /** The read of a poll that is not a pending one on time. */
  findByDeviceCode(hash: string): Promise<DeviceCode | undefined>;
  /** The /device page's read of what a person typed. */
  findByUserCode(hash: string): Promise<DeviceCode | undefined>;
  /** A poll at or past the interval: remembered, to tell the next one's pace. */
  recordPoll(hash: string, now: number): Promise<void>;
  /** A poll before the interval was up (slow_down): the interval is raised by 5 s. */
  recordTooFastPoll(hash: string, now: number): Promise<void>;
  /** The person denied a pending, live request; false when it was not. */
  deny(hash: string, now: number): Promise<boolean>;
  /** Uses an approved, live request up and stores the token pair issued for it, in one transaction. */
  redeem(hash: string, now: number, access: NewTokenRow, refresh: NewRefreshTokenRow): Promise<boolean>;
}

export function createDeviceCodeStore(db: Db): DeviceCodeStore {
  const q = db.kysely;
  return {
    insert: async (row) => {
      const result = await q.insertInto('device_codes').values(row).onConflict((oc) => oc.column('user_code_hash').doNothing()).executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },
    recordPendingPoll: async (hash, appId, now) => Number((await markPendingPoll(q, now, hash, appId, now, now)).numAffectedRows) === 1,
    findByDeviceCode: async (hash) => (await selectByDeviceCode(q, hash)).rows[0],
    findByUserCode: async (hash) => (await selectByUserCode(q, hash)).rows[0],
    recordPoll: async (hash, now) => {
      await markPolled(q, now, hash);
    },
    recordTooFastPoll: async (hash, now) => {
      await markTooFast(q, now, hash);
    },
    deny: async (hash, now) => Number((await markDenied(q, hash, now)).numAffectedRows) === 1,
    redeem: (hash, now, access, refresh) =>
      claimAndInsertPair(q, async (trx) => Number((await markUsed(trx, hash, now)).numAffectedRows) === 1, access, refresh),
  };
}
