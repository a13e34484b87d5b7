/**
 * Events counted from the rows of `events`: a row holds one event per bit of its `types`
 * (docs/decisions/0042-compact-events.md), so rows and events differ.
 */

/** The statement whose rows eventsIn counts, the same on SQLite and PostgreSQL. */
export const EVENT_TYPE_COUNTS = 'SELECT types, count(*) AS n FROM events GROUP BY types';

/** Events and rows of EVENT_TYPE_COUNTS's answer. */
export function eventsIn(rows: ReadonlyArray<{ types: number | string; n: number | string }>): { events: number; rows: number } {
  let events = 0;
  let count = 0;
  for (const row of rows) {
    let bits = 0;
    for (let types = Number(row.types); types > 0; types >>= 1) bits += types & 1;
    events += bits * Number(row.n);
    count += Number(row.n);
  }
  return { events, rows: count };
}
