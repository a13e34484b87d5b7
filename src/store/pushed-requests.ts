/**
 * Pushed authorization requests (RFC 9126), kept by the SHA-256 of their request_uri's random part
 * (docs/decisions/0020-pushed-authorization-requests.md).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

type Q = Kysely<Database>;

export interface PushedRequest {
  appId: string;
  parameters: Record<string, string>;
  expiresAt: number;
  usedAt: number | null;
}

export interface PushedRequestStore {
  insert(requestUriHash: string, appId: string, parameters: Record<string, string>, expiresAt: number, now: number): Promise<void>;
  find(requestUriHash: string): Promise<PushedRequest | undefined>;
  /**
   * Marks an unused request as used, if it expires after `notExpiredBefore`. Of any number of
   * concurrent claims on any number of processes exactly one sees `true`.
   */
  claim(requestUriHash: string, now: number, notExpiredBefore: number): Promise<boolean>;
}

export function createPushedRequestStore(q: Q): PushedRequestStore {
  return {
    async insert(requestUriHash, appId, parameters, expiresAt, now) {
      await q
        .insertInto('pushed_authorization_requests')
        .values({ request_uri_hash: requestUriHash, app_id: appId, parameters: JSON.stringify(parameters), expires_at: expiresAt, used_at: null, created_at: now })
        .execute();
    },
    async find(requestUriHash) {
      const row = await q.selectFrom('pushed_authorization_requests').selectAll().where('request_uri_hash', '=', requestUriHash).executeTakeFirst();
      return (
        row && {
          appId: row.app_id,
          parameters: JSON.parse(row.parameters) as Record<string, string>,
          expiresAt: Number(row.expires_at),
          usedAt: row.used_at === null ? null : Number(row.used_at),
        }
      );
    },
    async claim(requestUriHash, now, notExpiredBefore) {
      const result = await q
        .updateTable('pushed_authorization_requests')
        .set({ used_at: now })
        .where('request_uri_hash', '=', requestUriHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', notExpiredBefore)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
