/**
 * What a test needs from the machine — Chromium, Redis, PgBouncer, the PostgreSQL binaries, a
 * PostgreSQL server (TEST_DATABASE_URL), a filesystem of its own. Locally, a test whose dependency
 * is missing is skipped with the reason; in CI (CI=true, as .ci/run sets it) it is a failure, so
 * that CI never reports as run what it skipped.
 */

/** Whether this is CI's run: CI set to anything but empty, `false` or `0`. */
export const ON_CI = !['', 'false', '0'].includes((process.env.CI ?? '').trim().toLowerCase());

/**
 * `reason` (why a dependency is missing, or null when it is there) as a skip reason; in CI, thrown.
 * The helpers that say why a dependency is missing (`browserUnavailable`, `redisServerUnavailable`,
 * `postgresUnavailable`, …) return through it, so a test file that is given one as its `skip`
 * fails to load in CI: `describe('…', { skip: redisServerUnavailable() ?? false }, …)`.
 */
export function missing(reason: string | null): string | null {
  if (reason === null) return null;
  if (ON_CI) throw new Error(`${reason} (CI=true: a missing dependency fails the run instead of skipping)`);
  return reason;
}
