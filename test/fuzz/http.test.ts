/**
 * Fuzzing what is left (src/http/health.ts and the not-found handler of src/app.ts): /healthz,
 * /readyz, and paths no route serves — probes for files, traversal, other API versions — with any
 * method, headers and body.
 */
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { forEachDialect } from '../support/databases.js';
import { createFuzzTarget, fuzz, type FuzzTarget } from './property.js';
import { requestsTo, requestToUnknownPath, type Route } from './requests.js';
import { cheapPasswordHashing } from '../support/passwords.js';

/** The fuzz world's account, and those the cases sign up, sign in at the cheap cost: no property here is about hashing. */
cheapPasswordHashing();

export const HEALTH_ROUTES: Route[] = [
  { method: 'GET', path: '/healthz', face: 'api', statuses: [200], credentials: 'none' },
  // 503 while the database is away.
  { method: 'GET', path: '/readyz', face: 'api', statuses: [200, 503], credentials: 'none' },
];

/** Cases per database in `npm test`. */
const RUNS = 600;

forEachDialect('fuzzing health checks and unknown paths', (dialect) => {
  let target: FuzzTarget;
  before(async () => {
    target = await createFuzzTarget(dialect);
  });
  after(() => target.t.close());

  it('answers every request within the error contract', async (context) => {
    await fuzz(context, target, fc.oneof(requestsTo(HEALTH_ROUTES), requestToUnknownPath()), RUNS);
  });
});
