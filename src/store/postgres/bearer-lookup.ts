/** The bearer check on PostgreSQL (the statement and the row: ../bearer-lookup.ts). */
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import { FIND_COLUMNS, grantOf, MAX_BATCH, TOUCH_SQL, type BearerGrant, type BearerLookup, type FindRow } from '../bearer-lookup.js';
import { numberedPlaceholders } from '../placeholders.js';
import { unnestedParameters } from './kept-plans.js';

export function postgresBearerLookup(pool: pg.Pool): BearerLookup {
  const findMany = postgresFindMany(pool);
  const touchText = numberedPlaceholders(TOUCH_SQL);
  return {
    find: (tokenHash, now) => findMany({ tokenHash, now }),
    async touch(grantId, now) {
      await pool.query({ name: 'stride_bearer_touch', text: touchText, values: [now, grantId] });
    },
  };
}

/**
 * PostgreSQL: the bearer checks of one turn of the event loop are ONE statement (batched-calls.ts),
 * the keys as an array; each caller then checks the expiry against its own clock reading.
 */
function postgresFindMany(pool: pg.Pool) {
  // One primary-key probe per key whatever the planner knows of the tables: the plan kept for the
  // statement (./kept-plans.ts) may be made while they are nearly empty, and without the LIMIT the
  // lateral subquery would be flattened into a join the planner may answer with a scan.
  const text = `select k.key, ${FIND_COLUMNS}
    from ${unnestedParameters('text')} as k(key)
    cross join lateral (select * from access_tokens x where x.token_key = k.key and x.expires_at > $2 limit 1) t
    inner join grants g on g.id = t.grant_id
    inner join users u on u.id = t.user_id`;
  return batchedCalls<{ tokenHash: string; now: number }, BearerGrant | undefined>(async (calls) => {
    const keys = [...new Set(calls.map((call) => call.input.tokenHash))];
    const earliest = Math.min(...calls.map((call) => call.input.now));
    const result = await pool.query<FindRow & { key: string }>({ name: 'stride_bearer_find_many', text, values: [keys, earliest] });
    const rows = new Map(result.rows.map((row) => [row.key, row]));
    for (const { input, resolve } of calls) {
      const row = rows.get(input.tokenHash);
      const grant = row && grantOf(row);
      resolve(grant && grant.expiresAt > input.now ? grant : undefined);
    }
  }, MAX_BATCH);
}
