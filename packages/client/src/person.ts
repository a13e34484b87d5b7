/**
 * The resource API on behalf of one person: every request carries their access token, refreshed
 * through the TokenKeeper when it has expired or is refused as `invalid_token` (RFC 6750 §3.1), and
 * sent once more with the new one; 429 and 503 are waited on when the retry options say so.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/api.js';
import { sendWithRetries, type RetryOptions } from './retries.js';
import { TokenKeeper, type Tokens } from './tokens.js';
import { typedCalls, type TypedCalls } from './typed-calls.js';

export interface PersonClient extends TypedCalls {
  /** The openapi-fetch client underneath (`{ data, error, response }` answers), with the same tokens. */
  readonly api: Client<paths>;
  /** The current tokens (after any refresh). */
  readonly tokens: Tokens;
}

/** Whether a 401 says the access token is no good (expired, revoked), rather than something a refresh cannot mend. */
function refusedToken(response: Response): boolean {
  return response.status === 401 && /error="invalid_token"/.test(response.headers.get('www-authenticate') ?? '');
}

export function personClient(baseUrl: string, keeper: TokenKeeper, retry: RetryOptions, fetchFn: typeof fetch): PersonClient {
  const authorizedFetch = async (request: Request): Promise<Response> => {
    // The body is read once so that the request can be sent again (after a refresh, after a wait).
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const send = (accessToken: string) => () => {
      const headers = new Headers(request.headers);
      headers.set('authorization', `Bearer ${accessToken}`);
      return fetchFn(request.url, { method: request.method, headers, body, signal: request.signal });
    };
    const accessToken = await keeper.accessToken();
    const response = await sendWithRetries(send(accessToken), retry, request.signal);
    if (!refusedToken(response) || keeper.tokens.refreshToken === undefined) return response;
    await response.body?.cancel();
    const fresh = await keeper.refresh(accessToken);
    return sendWithRetries(send(fresh.accessToken), retry, request.signal);
  };
  const api = createClient<paths>({ baseUrl: baseUrl.replace(/\/+$/, ''), fetch: authorizedFetch });
  return {
    api,
    get tokens() {
      return keeper.tokens;
    },
    ...typedCalls(api),
  };
}
