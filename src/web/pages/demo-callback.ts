/**
 * `GET /demo/callback`: the redirect URI of the app made by `stride demo`. It shows the code and
 * state it received and the curl command that exchanges the code; it exchanges nothing itself.
 */
import type { FastifyInstance } from 'fastify';
import { hashCredential } from '../../security/secrets.js';
import { findAppById } from '../../store/apps.js';
import { findAuthorizationCode } from '../../store/codes.js';
import { sendPage } from '../views.js';

type Query = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** POSIX shell single-quoting. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export async function demoCallbackPage(app: FastifyInstance): Promise<void> {
  app.get('/demo/callback', async (request, reply) => {
    const { config, db } = app.ctx;
    const query = request.query as Query;
    const code = text(query.code);
    const redirectUri = `${config.publicUrl}/demo/callback`;
    // The client_id is public: look it up from the code so the command is ready to run.
    const stored = code === '' ? undefined : await findAuthorizationCode(db.kysely, hashCredential(code));
    const storedApp = stored && (await findAppById(db.kysely, stored.app_id));
    const clientId = storedApp?.clientId ?? 'YOUR_CLIENT_ID';
    const curl = [
      `curl -s -X POST ${config.publicUrl}/oauth2/token \\`,
      `  -d grant_type=authorization_code \\`,
      `  -d client_id=${shellQuote(clientId)} -d client_secret="$CLIENT_SECRET" \\`,
      `  --data-urlencode redirect_uri=${shellQuote(redirectUri)} \\`,
      `  --data-urlencode code=${shellQuote(code)}`,
    ].join('\n');
    return sendPage(reply, './demo-callback', {
      title: 'Demo callback',
      code,
      state: text(query.state),
      error: text(query.error),
      errorDescription: text(query.error_description),
      codeTtl: config.authCodeTtl,
      curl,
    });
  });
}
