/**
 * `createStride`: one object per app, holding its credentials and Stride's address, from which come
 * the authorization request, the code exchange, a client per person, and the event feed.
 */
import { feedEvents, feedPages, type FeedEvent, type FeedOptions, type FeedPageOf } from './events.js';
import {
  authorizationRequest,
  codeFromCallback,
  exchangeCode,
  refreshTokens,
  type AuthorizationOptions,
  type AuthorizationRequest,
  type OAuthSettings,
} from './oauth.js';
import { personClient, type PersonClient } from './person.js';
import type { RetryOptions } from './retries.js';
import { TokenKeeper, type OnTokens, type Tokens } from './tokens.js';
import { fetchTransport, undiciTransport } from './transport.js';

export interface StrideOptions {
  /** Stride's PUBLIC_URL, e.g. `https://stride.example`. */
  baseUrl: string;
  /** Stride's AUTH_URL, where people sign in; default `baseUrl`. */
  authUrl?: string;
  clientId: string;
  /** A confidential app's secret; leave out for a public app (PKCE alone, no event feed). */
  clientSecret?: string;
  /** Waiting on 429 and 503 (off by default): `{ rateLimited: true, unavailable: true, maxWaitSeconds: 30 }`. */
  retry?: RetryOptions;
  /**
   * How long, in seconds, a refresh whose answer was lost is sent again with the same refresh
   * token. Default 20, inside Stride's default REFRESH_REPLAY_WINDOW of 30.
   */
  refreshRetryWindowSeconds?: number;
  /** Milliseconds per token request. Default 10 000. */
  tokenTimeoutMs?: number;
  /**
   * Send through this fetch (a proxy agent, a recorder) instead of the client's own keep-alive
   * pool of undici connections.
   */
  fetch?: typeof fetch;
}

export interface CallbackCheck {
  /** The `state` of the authorization request this callback answers. */
  state: string;
  codeVerifier: string;
  redirectUri: string;
}

export interface PersonOptions {
  /** Store the new tokens; awaited before they are used (see README, "Refresh under rotation"). */
  onTokens?: OnTokens;
  /** Refresh this many seconds before the access token expires. Default 30. */
  refreshBeforeSeconds?: number;
}

export interface Stride {
  /** The URL to send a person to, with PKCE (S256) and state; keep `state` and `codeVerifier` for the callback. */
  authorizationUrl(options: AuthorizationOptions): Promise<AuthorizationRequest>;
  /** The redirect back to the app (its full URL): checks state and issuer, exchanges the code, returns the tokens. */
  handleCallback(callbackUrl: string | URL, check: CallbackCheck): Promise<Tokens>;
  /** The code exchange alone, when the code was read elsewhere. */
  exchangeCode(code: string, codeVerifier: string, redirectUri: string): Promise<Tokens>;
  /** A refresh alone: what `person()` does when it needs one. */
  refresh(refreshToken: string): Promise<Tokens>;
  /** The resource API on behalf of the person whose tokens these are. */
  person(tokens: Tokens, options?: PersonOptions): PersonClient;
  /** Every event after `after`, following the cursor until the feed is up to date. */
  events(options?: FeedOptions): AsyncGenerator<FeedEvent, void, undefined>;
  /** The same, a page at a time, with the cursor to keep after each. */
  eventPages(options?: FeedOptions): AsyncGenerator<FeedPageOf, void, undefined>;
  /** Closes the connections kept alive (they close by themselves after a few idle seconds). */
  close(): Promise<void>;
}

export function createStride(options: StrideOptions): Stride {
  const transport = options.fetch === undefined ? undiciTransport() : fetchTransport(options.fetch);
  const retry = options.retry ?? {};
  const settings: OAuthSettings = {
    baseUrl: options.baseUrl,
    authUrl: options.authUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    transport,
    refreshRetryWindowSeconds: options.refreshRetryWindowSeconds ?? 20,
    timeoutMs: options.tokenTimeoutMs ?? 10_000,
  };
  const feed = { baseUrl: options.baseUrl, clientId: options.clientId, clientSecret: options.clientSecret, retry, transport };
  return {
    authorizationUrl: (request) => authorizationRequest(settings, request),
    // async: a refused callback is a rejected promise like every other failure, never a throw.
    handleCallback: async (callbackUrl, check) => exchangeCode(settings, codeFromCallback(settings, callbackUrl, check.state), check.codeVerifier, check.redirectUri),
    exchangeCode: (code, codeVerifier, redirectUri) => exchangeCode(settings, code, codeVerifier, redirectUri),
    refresh: (refreshToken) => refreshTokens(settings, refreshToken),
    person(tokens, personOptions = {}) {
      const keeper = new TokenKeeper({
        tokens,
        onTokens: personOptions.onTokens,
        refreshBeforeSeconds: personOptions.refreshBeforeSeconds,
        refresh: (refreshToken) => refreshTokens(settings, refreshToken),
      });
      return personClient(options.baseUrl, keeper, retry, transport);
    },
    events: (feedOptions) => feedEvents(feed, feedOptions),
    eventPages: (feedOptions) => feedPages(feed, feedOptions),
    close: () => transport.close(),
  };
}
