/**
 * Counting each app's use (docs/web.md, "App usage") without slowing a request: the answer is
 * counted in memory when it is sent, and the counts go to the database in one transaction every
 * USAGE_FLUSH_SECONDS (and when the server stops), as additions, so every process's counts sum.
 *
 * Whose request it was: an API request's, the app of its access token — a token that was refused
 * (revoked, expired, bound to another key) included, found by its key when the counts are written;
 * a token never issued belongs to no app. A token, revocation or introspection request's, the client it proved
 * itself to be (`authenticatedClient`, set by the route: oauth/client-auth.ts) — a
 * confidential client by its secret, a public one only by a code or token issued to it — so naming
 * someone else's client id, with made-up codes or none, counts nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { grantTypeRule } from '../oauth/grant-types.js';

/** What one flush writes (store/usage.ts), as the context's store takes it. */
type UsageBatch = Parameters<AppContext['stores']['usage']['add']>[0];
type UsageOwner = UsageBatch['counts'][number]['owner'];

declare module 'fastify' {
  interface FastifyRequest {
    /** The `error` of an error answer (app.ts), for the app's list of last errors. */
    errorCode?: string;
    /**
     * The authenticated client of a client-endpoint request; the request counts for it once it has
     * proven itself (by the end of the request), for no app otherwise.
     */
    authenticatedClient?: { readonly app: { readonly clientId: string }; readonly proven: boolean };
    /** The key (tokenKey) of an access token the bearer hook refused (api/bearer.ts); unset otherwise. */
    refusedTokenKey?: string;
  }
}

export const USAGE_FLUSH_SECONDS = 10;

/** Apps and clients counted between flushes at most; beyond, new ones wait for the next flush. */
const MAX_OWNERS = 50_000;
/**
 * Refused tokens counted between flushes at most, apart from the apps' and clients' own counts: a
 * flood of well-formed but made-up tokens fills only this, never the others.
 */
const MAX_REFUSED_TOKENS = 10_000;
/** How tokenKey begins for a token this server never issued (security/secrets.ts): counted for no app. */
const NOT_ISSUED_HERE = '-';

/** The metric of an answer, by endpoint group and status, made once rather than per request. */
const metricsOf = (group: string) => ({ ok: `${group}.2xx`, clientError: `${group}.4xx`, limited: `${group}.429`, serverError: `${group}.5xx` });
const API_READ = metricsOf('api_read');
const API_WRITE = metricsOf('api_write');
const TOKEN = metricsOf('token');
const metricFor = (metrics: ReturnType<typeof metricsOf>, status: number) =>
  status === 429 ? metrics.limited : status >= 500 ? metrics.serverError : status >= 400 ? metrics.clientError : metrics.ok;

/** One app's (or one client id's) counts of one day. */
interface Tally {
  owner: UsageOwner;
  metrics: Map<string, number>;
  /** The most one grant of the app spent of an RATE_LIMIT_API window (API requests only). */
  busiestWindow: number;
}

export interface UsageCounter {
  /** onResponse hook of the resource API's routes: counted for the app of the access token. */
  countApiAnswer: onResponseHookHandler;
  /** onResponse hook of the token, revocation and introspection endpoints: counted for the client. */
  countClientAnswer: onResponseHookHandler;
  /**
   * Writes what was counted since the last flush; on failure the counts are kept for the next.
   * Once it resolves, everything counted before the call is in the database: a flush already under
   * way (the timer's) is waited for, not passed by.
   */
  flush(): Promise<void>;
}

export function countUsage(app: FastifyInstance): UsageCounter {
  const { stores, clock } = app.ctx;
  const apiLimit = app.ctx.config.rateLimits.api?.max;
  /** Tallies by UTC day, then by owner ("a:" app id, "c:" client id). */
  let days = new Map<string, Map<string, Tally>>();
  let owners = 0;
  let refusedTokens = 0;
  let errors: UsageBatch['errors'] = [];
  let refusedErrors: UsageBatch['errors'] = [];
  /** The flush under way, or the last one, settled either way. */
  let writing: Promise<void> = Promise.resolve();

  /** Today's tallies and the day's text, worked out once a minute rather than per request. */
  let dayMinute = -1;
  let today = new Map<string, Tally>();
  const todayOf = (now: number) => {
    const minute = Math.floor(now / 60);
    if (minute !== dayMinute) {
      dayMinute = minute;
      const day = new Date(minute * 60_000).toISOString().slice(0, 10);
      today = days.get(day) ?? new Map();
      days.set(day, today);
    }
    return today;
  };

  const tallyOf = (key: string, owner: UsageOwner, now: number): Tally | undefined => {
    const tallies = todayOf(now);
    let tally = tallies.get(key);
    const refused = 'tokenKey' in owner;
    if (tally === undefined && (refused ? refusedTokens < MAX_REFUSED_TOKENS : owners < MAX_OWNERS)) {
      tally = { owner, metrics: new Map(), busiestWindow: 0 };
      tallies.set(key, tally);
      if (refused) refusedTokens += 1;
      else owners += 1;
    }
    return tally;
  };
  const add = (tally: Tally, metric: string) => tally.metrics.set(metric, (tally.metrics.get(metric) ?? 0) + 1);
  const noteError = (request: FastifyRequest, owner: UsageOwner, at: number, status: number) => {
    const list = 'tokenKey' in owner ? refusedErrors : errors;
    if (list.length < ('tokenKey' in owner ? MAX_REFUSED_TOKENS : MAX_OWNERS)) list.push({ owner, at, status, error: request.errorCode ?? String(status), route: request.routeOptions.url ?? '' });
  };

  return {
    countApiAnswer(request, reply, done) {
      const auth = request.auth as { appId: string } | null;
      if (!auth) return countRefused(request, reply, done);
      const status = reply.statusCode;
      const now = clock();
      const owner = { appId: auth.appId };
      const tally = tallyOf(`a:${auth.appId}`, owner, now);
      if (tally === undefined) return done();
      add(tally, metricFor(request.method === 'GET' ? API_READ : API_WRITE, status));
      // How close the app came to RATE_LIMIT_API: the limiter's own count for the grant (its
      // x-ratelimit-remaining), the one that refuses — per process, or shared through Redis.
      const remaining = reply.getHeader('x-ratelimit-remaining');
      if (apiLimit !== undefined && remaining !== undefined) tally.busiestWindow = Math.max(tally.busiestWindow, apiLimit - Number(remaining));
      if (status >= 400) noteError(request, owner, now, status);
      done();
    },

    countClientAnswer(request, reply, done) {
      // Counted once the client proved itself: naming someone else's client id counts nothing.
      if (!request.authenticatedClient?.proven) return done();
      const clientId = request.authenticatedClient.app.clientId;
      const status = reply.statusCode;
      const now = clock();
      const owner = { clientId };
      const tally = tallyOf(`c:${clientId}`, owner, now);
      if (tally === undefined) return done();
      add(tally, metricFor(TOKEN, status));
      if (status === 200 && request.routeOptions.url === '/oauth2/token') {
        const grant = grantTypeRule((request.body as Record<string, unknown> | undefined)?.grant_type);
        if (grant !== undefined) add(tally, grant.usage);
      }
      if (status >= 400) noteError(request, owner, now, status);
      done();
    },

    flush() {
      // One at a time, in order: the app page flushes and then reads, and a timer's flush that had
      // just taken the counts would otherwise still be writing them when the page reads.
      const mine = writing.then(writeCounted);
      writing = mine.catch(() => undefined);
      return mine;
    },
  };

  /**
   * An API request whose token was refused: counted for the token's key, which the store turns into
   * the app it was issued to (or drops). A request with no token, or one never issued here, is no app's.
   */
  function countRefused(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    const key = request.refusedTokenKey;
    if (key === undefined || key.startsWith(NOT_ISSUED_HERE)) return done();
    const status = reply.statusCode;
    const now = clock();
    const owner = { tokenKey: key };
    const tally = tallyOf(`t:${key}`, owner, now);
    if (tally === undefined) return done();
    add(tally, metricFor(request.method === 'GET' ? API_READ : API_WRITE, status));
    noteError(request, owner, now, status);
    done();
  }

  async function writeCounted(): Promise<void> {
    if (owners === 0 && refusedTokens === 0 && errors.length === 0 && refusedErrors.length === 0) return;
    const kept = { days, errors: [...errors, ...refusedErrors] };
    days = new Map();
    owners = 0;
    refusedTokens = 0;
    errors = [];
    refusedErrors = [];
    dayMinute = -1; // today's tallies are looked up again, in the new map
    const batch: UsageBatch = { counts: [], peaks: [], errors: kept.errors };
    for (const [day, tallies] of kept.days) {
      for (const { owner, metrics, busiestWindow } of tallies.values()) {
        for (const [metric, count] of metrics) batch.counts.push({ owner, day, metric, count });
        if (busiestWindow > 0 && 'appId' in owner) batch.peaks.push({ appId: owner.appId, day, metric: 'api.busiest_window', count: busiestWindow });
      }
    }
    try {
      await stores.usage.add(batch);
    } catch (error) {
      // Kept for the next flush (the database may be away for a moment).
      for (const [day, tallies] of kept.days) {
        const since = days.get(day) ?? new Map<string, Tally>();
        days.set(day, since);
        for (const [key, tally] of tallies) {
          const counted = since.get(key);
          if (counted === undefined) {
            since.set(key, tally);
            if ('tokenKey' in tally.owner) refusedTokens += 1;
            else owners += 1;
            continue;
          }
          for (const [metric, count] of tally.metrics) counted.metrics.set(metric, (counted.metrics.get(metric) ?? 0) + count);
          counted.busiestWindow = Math.max(counted.busiestWindow, tally.busiestWindow);
        }
      }
      errors = [...kept.errors.filter(({ owner }) => !('tokenKey' in owner)), ...errors].slice(-MAX_OWNERS);
      refusedErrors = [...kept.errors.filter(({ owner }) => 'tokenKey' in owner), ...refusedErrors].slice(-MAX_REFUSED_TOKENS);
      throw error;
    }
  }
}
