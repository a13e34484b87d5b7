/**
 * The `scope` parameter as an app sends it (RFC 6749 §3.3): Stride's scope names, Fitbit's scope
 * words (fitbit-scopes.ts), or both. The one reading of it for the authorization endpoint, pushed
 * requests, the device authorization endpoint and a refresh's narrowing; and the token response's
 * `scope` in the words the app asked with.
 */
import { isFitbitWord, scopesOfWord } from './fitbit-scopes.js';
import { formatScopes, isScope, parseScopeString } from './scopes.js';

/** What a request's scope asks for, within the scopes it may have. */
export type ScopeRequest =
  | {
      ok: true;
      /** The Stride scopes asked for, canonical order; never empty. */
      scopes: string[];
      /**
       * The request as the token responses remember it: its parts, each once, in the order sent,
       * when one is a Fitbit word (the responses then name its words); null when it asked in
       * Stride's scope names alone.
       */
      worded: string | null;
    }
  /**
   * `unknown`: `scope` is neither a Stride scope nor a Fitbit word. `not_allowed`: `scope` is a
   * Stride scope outside those allowed. `nothing`: no scope allowed is asked for at all.
   */
  | { ok: false; problem: 'unknown' | 'not_allowed'; scope: string }
  | { ok: false; problem: 'nothing' };

/**
 * Reads `value` within `allowed` (the app's registered scopes; at a refresh, the scopes the token
 * holds). A Stride scope named must be allowed. A Fitbit word's scopes are taken where allowed and
 * otherwise left out, like a box left unticked: the app cannot choose which of Stride's scopes its
 * words stand for, and failing its flow for one of them would fail every unchanged Fitbit client.
 */
export function readScopeRequest(value: string, allowed: readonly string[]): ScopeRequest {
  const parts = [...new Set(parseScopeString(value))];
  const asked = new Set<string>();
  let worded = false;
  for (const part of parts) {
    if (isScope(part)) {
      if (!allowed.includes(part)) return { ok: false, problem: 'not_allowed', scope: part };
      asked.add(part);
    } else if (isFitbitWord(part)) {
      worded = true;
      for (const scope of scopesOfWord(part)) if (allowed.includes(scope)) asked.add(scope);
    } else {
      return { ok: false, problem: 'unknown', scope: part };
    }
  }
  if (asked.size === 0) return { ok: false, problem: 'nothing' };
  return { ok: true, scopes: formatScopes(asked).split(' '), worded: worded ? parts.join(' ') : null };
}

/** The Fitbit words of data Stride does not hold in a request as remembered (`worded`): granted as nothing. */
export function unheldWords(worded: string | null): string[] {
  return worded === null ? [] : parseScopeString(worded).filter((part) => isFitbitWord(part) && scopesOfWord(part).length === 0);
}

/**
 * A token response's `scope` (RFC 6749 §5.1) for a token holding `tokenScope`: those Stride scope
 * names, or, for a request that asked in Fitbit's words (`worded`), the request's own parts that the
 * token holds, in the order asked — a Stride scope it has, a Fitbit word of which it has any scope,
 * and every word of data Stride does not hold (granted as nothing). A client that compares the
 * answer with what it asked for (oauthlib does) finds them equal when everything was granted.
 */
export function answeredScope(tokenScope: string, worded: string | null): string {
  if (worded === null) return tokenScope;
  const held = new Set(parseScopeString(tokenScope));
  return parseScopeString(worded)
    .filter((part) => {
      if (isScope(part)) return held.has(part);
      const scopes = scopesOfWord(part);
      return scopes.length === 0 || scopes.some((scope) => held.has(scope));
    })
    .join(' ');
}
