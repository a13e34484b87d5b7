/**
 * `GET /demo/callback`: the redirect URI of the app made by `stride demo`. It shows the code and
 * state it received and the curl command that exchanges the code; it exchanges nothing itself.
 */
import type { FastifyInstance } from 'fastify';
import { hashCredential } from '../../security/secrets.js';
import { sendPage } from '../views.js';

type Query = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The error codes of RFC 6749 §4.1.2.1, each with the page's own words. Whoever sends a browser
 * to this page chooses `error_description`, so it is never shown: a link could otherwise make
 * Stride's page say anything. An unknown code is not shown either.
 */
const AUTHORIZATION_ERRORS: Record<string, string> = {
  invalid_request: 'The request was missing a parameter, or had one that is not valid.',
  unauthorized_client: 'The app is not allowed to ask for a code this way.',
  access_denied: 'The person (or Stride) refused the request.',
  unsupported_response_type: 'Stride does not issue what was asked for (only response_type=code).',
  invalid_scope: 'The requested scope is unknown, or not registered for this app.',
  server_error: 'Stride failed to handle the request.',
  temporarily_unavailable: 'Stride could not handle the request just now; try again later.',
};

/** The page's text for an error code: only codes it knows are shown as they are. */
export function describeAuthorizationError(code: string): { code: string | null; text: string } {
  return Object.hasOwn(AUTHORIZATION_ERRORS, code)
    ? { code, text: AUTHORIZATION_ERRORS[code]! }
    : { code: null, text: 'The app received an error that this page does not know.' };
}

/** POSIX shell single-quoting. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export async function demoCallbackPage(app: FastifyInstance): Promise<void> {
  app.get('/demo/callback', async (request, reply) => {
    const { config, stores } = app.ctx;
    const query = request.query as Query;
    const code = text(query.code);
    const redirectUri = `${config.publicUrl}/demo/callback`;
    // The client_id is public: look it up from the code so the command is ready to run.
    const stored = code === '' ? undefined : await stores.codes.find(hashCredential(code));
    const storedApp = stored && (await stores.apps.findById(stored.app_id));
    const clientId = storedApp?.clientId ?? 'YOUR_CLIENT_ID';
    // One parameter a line: the longest line is the code's, which fits a computer's screen whole;
    // on a phone the command scrolls in its box (views/command.eta).
    const curl = [
      `curl -s -X POST ${config.publicUrl}/oauth2/token \\`,
      `  -d grant_type=authorization_code \\`,
      `  -d client_id=${shellQuote(clientId)} \\`,
      `  -d client_secret="$CLIENT_SECRET" \\`,
      `  --data-urlencode redirect_uri=${shellQuote(redirectUri)} \\`,
      `  --data-urlencode code=${shellQuote(code)}`,
    ].join('\n');
    const error = text(query.error);
    return sendPage(reply, './demo-callback', {
      title: 'Demo callback',
      // The exchange command is shown whole on a computer's screen, not scrolled (stride.css main.wide .command-block).
      wide: true,
      code,
      state: text(query.state),
      error: error === '' ? null : describeAuthorizationError(error),
      codeTtl: config.authCodeTtl,
      curl,
    });
  });
}
