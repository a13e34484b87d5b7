/**
 * The app's event feed, `GET /v1/events` with the app's own credentials (docs/webhooks.md, "The
 * feed"), as async iterators that follow `next_cursor` until a page comes back empty: the app is
 * then up to date, and keeps the last cursor to ask again later.
 */
import { StrideError } from './errors.js';
import type { paths } from './generated/api.js';
import { basicCredentials } from './oauth.js';
import { sendWithRetries, type RetryOptions } from './retries.js';
import type { Transport } from './transport.js';
import { typedCalls } from './typed-calls.js';

type FeedPage = paths['/v1/events']['get']['responses'][200]['content']['application/json'];

/** One event of the feed, as /openapi.json describes it. */
export type FeedEvent = FeedPage['data'][number];

export interface FeedPageOf {
  events: FeedEvent[];
  /** Give it as `after` to continue after this page; keep it once a page is empty. */
  cursor: string;
}

export interface FeedOptions {
  /** The cursor to continue from; from the oldest event kept without it. */
  after?: string | undefined;
  /** Events per request, 1–1000 (default 100). */
  limit?: number | undefined;
}

export interface FeedSettings {
  baseUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  retry: RetryOptions;
  transport: Transport;
}

export async function* feedPages(settings: FeedSettings, options: FeedOptions = {}): AsyncGenerator<FeedPageOf, void, undefined> {
  const secret = settings.clientSecret;
  if (secret === undefined) throw new StrideError({ error: 'invalid_client', errorDescription: "the event feed is read with the app's client secret: give clientSecret" });
  const headers = { authorization: basicCredentials(settings.clientId, secret), accept: 'application/json' };
  const calls = typedCalls(settings.baseUrl, (method, url, body, signal) =>
    sendWithRetries(() => settings.transport.send({ method, url, headers, body, signal }), settings.retry, signal),
  );
  let cursor = options.after;
  for (;;) {
    const query = { ...(cursor !== undefined && { after: cursor }), ...(options.limit !== undefined && { limit: options.limit }) };
    const page = await calls.get('/v1/events', { params: { query } });
    if (page.data.length === 0) return;
    cursor = page.next_cursor;
    yield { events: page.data, cursor };
  }
}

export async function* feedEvents(settings: FeedSettings, options: FeedOptions = {}): AsyncGenerator<FeedEvent, void, undefined> {
  for await (const page of feedPages(settings, options)) yield* page.events;
}
