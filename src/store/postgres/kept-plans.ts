/**
 * The arrays of a batched statement prepared by name (store/postgres/), so that PostgreSQL keeps
 * one plan for it per connection under its default `plan_cache_mode = auto`.
 *
 * PostgreSQL plans a prepared statement for its parameters' values five times, then makes a plan
 * for any values and keeps it if its estimated cost is below the average of those five (which
 * count a charge for planning). The planner reads an array's length from a parameter's value, and
 * guesses 10 elements without one: a batch of fewer than ten was estimated cheaper planned for its
 * values, and planned again at every execution — the planning cost more server time than the
 * statement.
 * Passed through a scalar subquery (an InitPlan, evaluated once per execution), an array is
 * unknown to the planner in both plans, so they cost the same and the kept one is chosen. The
 * statements' other values are compared with a row already found by its key (the bearer check's
 * time): one row either way.
 *
 * The kept plan is made for 10 rows whatever the batch's size: each statement is written so that
 * its plan probes a primary key or a unique index per row (a lateral subquery with `LIMIT 1` or
 * `OFFSET 0`, which the planner does not flatten into a join), right for one row as for 256.
 */

/** `unnest(...)` of the statement's first parameters, arrays of these element types, in order. */
export function unnestedParameters(...types: readonly string[]): string {
  return `unnest(${types.map((type, i) => `(select $${i + 1}::${type}[])`).join(', ')})`;
}
