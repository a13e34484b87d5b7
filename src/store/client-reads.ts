/**
 * PostgreSQL: the reads a token request starts with — its client's app, by client id (apps.ts),
 * and for a refresh its token, by key (refresh-rotation.ts) — of one turn of the event loop in ONE
 * statement: the apps read for the requests that arrived in the turn and the tokens read for those
 * whose client was just authenticated go together, one round trip for all of them. A statement for
 * each read had cost half the refresh rate (docs/performance.md, November 26). Each read fills its
 * own parameter (the other is null) and finds its row, as JSON, in its own column.
 *
 * Each row is one unique-index probe whatever the planner knew of the tables when it made the plan
 * kept for this statement (LIMIT keeps the lateral subqueries from being flattened into joins).
 */
import { turnStatement } from '../db/declared.js';

export const CLIENT_READS = turnStatement({
  name: 'stride_client_reads',
  parameters: { client_id: 'text', token_key: 'text' },
  text: (input) => `SELECT row_to_json(a) AS app, row_to_json(r) AS token, input.n
    FROM ${input}
    LEFT JOIN LATERAL (SELECT * FROM apps x WHERE x.client_id = input.client_id LIMIT 1) a ON true
    LEFT JOIN LATERAL (SELECT * FROM refresh_tokens x WHERE x.token_key = input.token_key LIMIT 1) r ON true`,
});

/** The columns of CLIENT_READS' rows that hold each read's row. */
export const APP_COLUMN = 0;
export const TOKEN_COLUMN = 1;
