/**
 * PostgreSQL: the reads a token request starts with — its client's app, by client id, and for a
 * refresh its token, by key — of one turn of the event loop in ONE statement (batched-calls.ts):
 * the apps read for the requests that arrived in the turn and the tokens read for those whose
 * client was just authenticated go together, one round trip for all of them. A statement for each
 * read had cost half the refresh rate (docs/performance.md, November 26).
 */
import type { Selectable } from 'kysely';
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import type { AppTable } from '../../db/schema.js';
import type { RefreshTokenRow } from '../tokens.js';
import { unnestedParameters } from './kept-plans.js';

type AppRow = Selectable<AppTable>;

/** One read: an app by client id, or a refresh token by key. */
type Read = { clientId: string; tokenKey?: undefined } | { clientId?: undefined; tokenKey: string };

export interface ClientReads {
  app(clientId: string): Promise<AppRow | undefined>;
  refreshToken(tokenKey: string): Promise<RefreshTokenRow | undefined>;
}

/** Most reads one statement carries; more start the next. */
const MAX_READS = 256;

// Row n answers the n-th read; each is one unique-index probe whatever the planner knew of the
// tables when it made the plan kept for this statement (./kept-plans.ts; LIMIT keeps the lateral
// subqueries from being flattened into joins). The rows come as JSON: both tables' columns by name, bigints as numbers.
const TEXT = `SELECT q.n, row_to_json(a) AS app, row_to_json(r) AS token
  FROM ${unnestedParameters('text', 'text')} WITH ORDINALITY AS q(client_id, token_key, n)
  LEFT JOIN LATERAL (SELECT * FROM apps x WHERE x.client_id = q.client_id LIMIT 1) a ON true
  LEFT JOIN LATERAL (SELECT * FROM refresh_tokens x WHERE x.token_key = q.token_key LIMIT 1) r ON true`;

const perPool = new WeakMap<pg.Pool, ClientReads>();

/** The pool's one reader, so that the app store and the rotation store share its batches. */
export function postgresClientReads(pool: pg.Pool): ClientReads {
  let reads = perPool.get(pool);
  if (reads === undefined) {
    const read = batchedCalls<Read, AppRow | RefreshTokenRow | undefined>(async (calls) => {
      const result = await pool.query<{ n: number; app: AppRow | null; token: RefreshTokenRow | null }>({
        name: 'stride_client_reads',
        text: TEXT,
        values: [calls.map((call) => call.input.clientId ?? null), calls.map((call) => call.input.tokenKey ?? null)],
      });
      const found = new Array<AppRow | RefreshTokenRow | undefined>(calls.length);
      for (const { n, app, token } of result.rows) found[Number(n) - 1] = app ?? token ?? undefined;
      calls.forEach((call, i) => call.resolve(found[i]));
    }, MAX_READS);
    reads = {
      app: (clientId) => read({ clientId }) as Promise<AppRow | undefined>,
      refreshToken: (tokenKey) => read({ tokenKey }) as Promise<RefreshTokenRow | undefined>,
    };
    perPool.set(pool, reads);
  }
  return reads;
}
