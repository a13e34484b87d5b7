/**
 * A token's scope string split into its list once (switch `scope-lists`, src/speed-switches.ts):
 * a scope string takes few values (the sorted subsets of the scopes), so the lists are shared
 * between bearer checks, frozen, never modified.
 *
 * What it saves: a split and an array for every bearer check. Row 1 of `npm run bench` (bearer
 * `GET /v1/users/me`) and row 11 (DPoP-bound). The plain path (scopeList) splits every time;
 * test/fuzz/speed-caches shows both give the same lists.
 */
import { isOn, keptBy } from '../speed-switches.js';

/** Lists kept, at most; beyond, the kept ones are let go together. */
const MAX_SCOPE_LISTS = 256;

/** The plain path: the names of a space-separated scope string, in a new frozen list. */
export const scopeList = (scope: string): readonly string[] => Object.freeze(scope === '' ? [] : scope.split(' '));

/** Lists kept by their scope string. */
export function keptScopeLists(maxLists = MAX_SCOPE_LISTS): (scope: string) => readonly string[] {
  return keptBy(maxLists, (scope: string) => scope, scopeList);
}

/** The list of a token's scope string: kept, or split each time when STRIDE_PLAIN switches lists off. */
export const scopesOf = isOn('scope-lists') ? keptScopeLists() : scopeList;
