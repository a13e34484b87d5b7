/**
 * Counting each app's use (docs/web.md, "App usage") without slowing a request: the answer is
 * counted in memory when it is sent, and the counts go to the database in one transaction every
 * USAGE_FLUSH_SECONDS (and when the server stops), as additions, so every process's counts sum.
 *
 * Whose request it was: an API request's, the app of its access token (a request with no valid
 * token belongs to no app). A token, revocation or introspection request's, the client it names —
 * counted only once the client proved itself (a success, or an error the grant gave after client
 * authentication), so naming someone else's client id counts nothing; client ids no app has are
 * dropped when the counts are written.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';

/** What one flush writes (store/usage.ts), as the context's store takes it. */
type UsageBatch = Parameters<AppContext['stores']['usage']['add']>[0];
type UsageOwner = UsageBatch['counts'][number]['owner'];

declare module 'fastify' {
  interface FastifyRequest {
    /** The `error` of an error answer (app.ts), for the app's list of last errors. */
    errorCode?: string;
  }
}

export const USAGE_FLUSH_SECONDS = 10;

/** Errors of the client endpoints that only come after the client authenticated (RFC 6749 §5.2). */
const AFTER_CLIENT_AUTHENTICATION = new Set(['invalid_grant', 'invalid_scope', 'unauthorized_client', 'unsupported_grant_type', 'access_denied']);
const CLIENT_ENDPOINTS = new Set(['/oauth2/token', '/oauth2/revoke', '/oauth2/introspect']);
/** Distinct counters held between flushes at most; beyond, new ones wait for the next flush. */
const MAX_KEYS = 50_000;

export interface UsageCounter {
  /** Writes what was counted since the last flush; on failure the counts are kept for the next. */
  flush(): Promise<void>;
}

const outcomeOf = (status: number) => (status === 429 ? '429' : status >= 500 ? '5xx' : status >= 400 ? '4xx' : '2xx');

function clientIdOf(request: FastifyRequest): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  if (body && typeof body.client_id === 'string') return body.client_id;
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (!basic) return undefined;
  const decoded = Buffer.from(basic, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? decodeURIComponent(decoded.slice(0, colon)) : undefined;
}

export function countUsage(app: FastifyInstance): UsageCounter {
  const { stores, clock } = app.ctx;
  let counts = new Map<string, { owner: UsageOwner; day: string; metric: string; count: number }>();
  let errors: UsageBatch['errors'] = [];
  /** API requests per grant and minute, for the day's busiest minute of each app. */
  let minutes = new Map<string, { appId: string; day: string; count: number }>();

  /** The UTC day of a time, worked out once a minute rather than per request. */
  let dayMinute = -1;
  let dayText = '';
  const dayOf = (now: number) => {
    const minute = Math.floor(now / 60);
    if (minute !== dayMinute) {
      dayMinute = minute;
      dayText = new Date(minute * 60_000).toISOString().slice(0, 10);
    }
    return dayText;
  };

  const add = (owner: UsageOwner, ownerKey: string, day: string, metric: string) => {
    const key = `${ownerKey} ${day} ${metric}`;
    const entry = counts.get(key);
    if (entry) entry.count += 1;
    else if (counts.size < MAX_KEYS) counts.set(key, { owner, day, metric, count: 1 });
  };

  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const now = clock();
    const day = dayOf(now);
    const route = request.routeOptions.url ?? '';
    const auth = request.auth as { appId: string; grantId: string } | null | undefined;
    let owner: UsageOwner | undefined;
    let ownerKey = '';
    if (auth && route.startsWith('/v1/')) {
      owner = { appId: auth.appId };
      ownerKey = `a:${auth.appId}`;
      add(owner, ownerKey, day, `${request.method === 'GET' ? 'api_read' : 'api_write'}.${outcomeOf(status)}`);
      const minute = `${auth.grantId} ${Math.floor(now / 60)}`;
      const seen = minutes.get(minute);
      if (seen) seen.count += 1;
      else if (minutes.size < MAX_KEYS) minutes.set(minute, { appId: auth.appId, day, count: 1 });
    } else if (CLIENT_ENDPOINTS.has(route) && (status < 400 || status >= 500 || AFTER_CLIENT_AUTHENTICATION.has(request.errorCode ?? ''))) {
      const clientId = clientIdOf(request);
      if (clientId === undefined) return done();
      owner = { clientId };
      ownerKey = `c:${clientId}`;
      add(owner, ownerKey, day, `token.${outcomeOf(status)}`);
      const grantType = (request.body as Record<string, unknown> | undefined)?.grant_type;
      if (status === 200 && route === '/oauth2/token') {
        if (grantType === 'authorization_code') add(owner, ownerKey, day, 'tokens.issued');
        if (grantType === 'refresh_token') add(owner, ownerKey, day, 'tokens.refreshed');
      }
    }
    if (owner !== undefined && status >= 400 && errors.length < MAX_KEYS) {
      errors.push({ owner, at: now, status, error: request.errorCode ?? String(status), route });
    }
    done();
  });

  return {
    async flush() {
      if (counts.size === 0 && errors.length === 0 && minutes.size === 0) return;
      const batch: UsageBatch = { counts: [...counts.values()], errors, peaks: [] };
      const busiest = new Map<string, { appId: string; day: string; metric: string; count: number }>();
      for (const { appId, day, count } of minutes.values()) {
        const key = `${appId} ${day}`;
        if ((busiest.get(key)?.count ?? 0) < count) busiest.set(key, { appId, day, metric: 'api.peak_minute', count });
      }
      batch.peaks = [...busiest.values()];
      const [keptCounts, keptErrors, keptMinutes] = [counts, errors, minutes];
      counts = new Map();
      errors = [];
      // A minute still under way keeps counting: its running count is written again as a maximum.
      const current = Math.floor(clock() / 60);
      minutes = new Map([...keptMinutes].filter(([key]) => Number(key.split(' ')[1]) >= current));
      try {
        await stores.usage.add(batch);
      } catch (error) {
        // Kept for the next flush (the database may be away for a moment).
        for (const [key, entry] of keptCounts) {
          const now = counts.get(key);
          if (now) now.count += entry.count;
          else counts.set(key, entry);
        }
        errors = [...keptErrors, ...errors].slice(-MAX_KEYS);
        throw error;
      }
    },
  };
}
