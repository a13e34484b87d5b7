/**
 * A person's tokens and the one rule that keeps them alive under rotation: one refresh in flight per
 * refresh token. Stride rotates the refresh token on every refresh and, past its replay window,
 * takes a second use of a rotated token as theft and ends the grant
 * (docs/decisions/0003-refresh-replay-window.md). So concurrent calls that find the access token
 * expired await the same refresh; the new tokens are handed to `onTokens` — to be stored — before
 * any call uses them; and a refresh whose answer was lost is sent again with the same refresh
 * token while the server still answers it the same (docs/decisions/0025-typed-client.md).
 */

export interface Tokens {
  accessToken: string;
  /** Absent when the grant gave none. */
  refreshToken?: string | undefined;
  /** Unix seconds when the access token stops working. */
  expiresAt: number;
  /** The scopes granted, as the token response's `scope` lists them. */
  scope: string[];
  /** `Bearer`. */
  tokenType: string;
}

/** Store them: called with each new pair before it is used; a failure fails the call that refreshed. */
export type OnTokens = (tokens: Tokens) => void | Promise<void>;

export interface TokenKeeperOptions {
  tokens: Tokens;
  onTokens?: OnTokens | undefined;
  /** Sends one refresh (with its own retries inside the replay window). */
  refresh(refreshToken: string): Promise<Tokens>;
  /** Refresh this many seconds before `expiresAt`, so that a token does not expire on its way. Default 30. */
  refreshBeforeSeconds?: number | undefined;
  /** Unix seconds. */
  now?: (() => number) | undefined;
}

export class TokenKeeper {
  #tokens: Tokens;
  #inFlight: { refreshToken: string; promise: Promise<Tokens> } | null = null;
  readonly #options: TokenKeeperOptions;

  constructor(options: TokenKeeperOptions) {
    this.#tokens = options.tokens;
    this.#options = options;
  }

  get tokens(): Tokens {
    return this.#tokens;
  }

  #now(): number {
    return this.#options.now?.() ?? Math.floor(Date.now() / 1000);
  }

  /** A usable access token: the current one, or the one a refresh (shared by every caller) brings. */
  async accessToken(): Promise<string> {
    const tokens = this.#tokens;
    const margin = this.#options.refreshBeforeSeconds ?? 30;
    if (tokens.refreshToken === undefined || tokens.expiresAt - margin > this.#now()) return tokens.accessToken;
    return (await this.refresh(tokens.accessToken)).accessToken;
  }

  /**
   * New tokens after `staleAccessToken` was refused or expired. If another call has replaced it
   * meanwhile, that call's tokens are the answer; if a refresh is in flight, its answer is.
   */
  refresh(staleAccessToken: string): Promise<Tokens> {
    const tokens = this.#tokens;
    if (tokens.accessToken !== staleAccessToken) return Promise.resolve(tokens);
    const refreshToken = tokens.refreshToken;
    if (refreshToken === undefined) return Promise.reject(new Error('the access token was refused and there is no refresh token'));
    if (this.#inFlight?.refreshToken === refreshToken) return this.#inFlight.promise;
    const promise = (async () => {
      const fresh = await this.#options.refresh(refreshToken);
      // Stored before anything uses it: a crash from here on leaves the new refresh token where
      // the app keeps it. If storing fails the old tokens stay current, and the next call sends
      // the old refresh token again, which the replay window answers with this same pair.
      await this.#options.onTokens?.(fresh);
      this.#tokens = fresh;
      return fresh;
    })().finally(() => {
      if (this.#inFlight?.promise === promise) this.#inFlight = null;
    });
    this.#inFlight = { refreshToken, promise };
    return promise;
  }
}
