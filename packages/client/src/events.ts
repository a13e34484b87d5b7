/**
 * The app's event feed, `GET /v1/events` with the app's own credentials (docs/webhooks.md, "The
 * feed"), as async iterators that follow `next_cursor` until a page comes back empty: the app is
 * then up to date, and keeps the last cursor to ask again later.
 */
import createClient from 'openapi-fetch';
import { errorFromResponse } from './errors.js';
import type { paths } from './generated/api.js';
import { basicCredentials } from './oauth.js';
import { sendWithRetries, type RetryOptions } from './retries.js';

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
  fetch: typeof fetch;
}

export async function* feedPages(settings: FeedSettings, options: FeedOptions = {}): AsyncGenerator<FeedPageOf, void, undefined> {
  if (settings.clientSecret === undefined) throw new Error('the event feed is read with the app\'s client secret: give clientSecret');
  const client = createClient<paths>({
    baseUrl: settings.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: basicCredentials(settings.clientId, settings.clientSecret) },
    fetch: (request) => sendWithRetries(() => settings.fetch(request.clone()), settings.retry, request.signal),
  });
  let cursor = options.after;
  for (;;) {
    const query = { ...(cursor !== undefined && { after: cursor }), ...(options.limit !== undefined && { limit: options.limit }) };
    const { data, error, response } = await client.GET('/v1/events', { params: { query } });
    if (data === undefined) throw await errorFromResponse(response, error ?? null);
    if (data.data.length === 0) return;
    cursor = data.next_cursor;
    yield { events: data.data, cursor };
  }
}

export async function* feedEvents(settings: FeedSettings, options: FeedOptions = {}): AsyncGenerator<FeedEvent, void, undefined> {
  for await (const page of feedPages(settings, options)) yield* page.events;
}
