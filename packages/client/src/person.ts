/**
 * The resource API on behalf of one person: every request carries their access token, refreshed
 * through the TokenKeeper when it has expired or is refused as `invalid_token` (RFC 6750 §3.1), and
 * sent once more with the new one; 429 and 503 are waited on when the retry options say so.
 */
import { sendWithRetries, type RetryOptions } from './retries.js';
import { TokenKeeper, type Tokens } from './tokens.js';
import type { Answer, Transport } from './transport.js';
import { typedCalls, type TypedCalls } from './typed-calls.js';

export interface PersonClient extends TypedCalls {
  /** The current tokens (after any refresh). */
  readonly tokens: Tokens;
}

/** Whether a 401 says the access token is no good (expired, revoked), rather than something a refresh cannot mend. */
function refusedToken(answer: Answer): boolean {
  return answer.status === 401 && /error="invalid_token"/.test(answer.header('www-authenticate') ?? '');
}

export function personClient(baseUrl: string, keeper: TokenKeeper, retry: RetryOptions, transport: Transport): PersonClient {
  const authorizedSend = async (method: string, url: string, body: string | undefined, signal: AbortSignal | undefined): Promise<Answer> => {
    const send = (accessToken: string) => () => {
      const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      return transport.send({ method, url, headers, body, signal });
    };
    const accessToken = await keeper.accessToken();
    const answer = await sendWithRetries(send(accessToken), retry, signal);
    if (!refusedToken(answer) || keeper.tokens.refreshToken === undefined) return answer;
    await answer.discard();
    const fresh = await keeper.refresh(accessToken);
    return sendWithRetries(send(fresh.accessToken), retry, signal);
  };
  return {
    get tokens() {
      return keeper.tokens;
    },
    ...typedCalls(baseUrl, authorizedSend),
  };
}
