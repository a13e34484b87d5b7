/**
 * A cheaper Argon2id for the test files whose passwords only have to work: people signed up and
 * signed in to get a session, a consent or a code. Every hash and verification still goes through
 * security/passwords.ts and is Argon2id; only its memory and time drop, from 19 MiB and 2 passes
 * (tens of ms of one core each) to 1 MiB and 1 pass. These files hash and verify hundreds of
 * passwords, and none of their assertions depends on what that costs.
 *
 * A file calls it once, at the top: it changes the parameters for its own process only (the files
 * that call it share processes only with each other: scripts/test-files.mjs). Where the cost or the parameters are what is tested — the
 * hashing itself (security/), the stored hash (cli/), sign-up and sign-in taking the same time
 * for taken and free emails (web/account-enumeration) — the real cost stays, as it does in every
 * `stride` process a test starts.
 */
import { ARGON2_OPTIONS } from '../../src/security/passwords.js';

export function cheapPasswordHashing(): void {
  Object.assign(ARGON2_OPTIONS, { memoryCost: 1024, timeCost: 1 });
}
