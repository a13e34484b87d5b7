/**
 * The authorization endpoint in /openapi.json. It is a page (web/pages/authorize.ts reads its
 * query itself), so it has no route schema; this path item describes it for the reference and for
 * client generators: the parameters of RFC 6749 §4.1.1, RFC 7636 §4.3 and RFC 9126 §4, and where it
 * sends the browser.
 */

const query = (name: string, description: string, schema: object = { type: 'string' }, required = false) => ({ in: 'query', name, required, description, schema });

export const AUTHORIZATION_ENDPOINT_PATH_ITEM = {
  get: {
    tags: ['OAuth 2.0'],
    summary: 'Ask a person to authorize the app (opened in their browser, not called by a program)',
    description: [
      'The app sends the person\'s browser here. Stride signs them in if needed (302 to `/login`), then shows the consent page; their answer sends the browser back to `redirect_uri` with `code` (or `error`), `state` and `iss` (RFC 9207).',
      'With a pushed request (RFC 9126) only `client_id` and `request_uri` are sent: the pushed parameters are the request.',
      'An error is redirected to the app only when the person has already approved it; otherwise Stride shows an error page with a link back (RFC 9700 §4.11.2).',
    ].join('\n\n'),
    security: [],
    parameters: [
      query('client_id', 'The app\'s client ID.', { type: 'string' }, true),
      query('response_type', 'Always `code`; required unless `request_uri` is sent.', { type: 'string', enum: ['code'] }),
      query('redirect_uri', 'One of the app\'s registered redirect URIs, exactly (a loopback one, http://127.0.0.1/…, on any port); required unless `request_uri` is sent. `redirect_url`, the name of Stride\'s first interface, works too.'),
      query('scope', 'Space-separated; the app\'s registered scopes when left out.', { type: 'string', examples: ['read_profile read_activity'] }),
      query('state', 'Sent back unchanged with the answer: the app\'s check that the answer belongs to its request (CSRF).'),
      query('code_challenge', 'base64url(SHA-256(code_verifier)), 43 characters (RFC 7636 §4.2); required of public apps.'),
      query('code_challenge_method', '`S256`, the only method.', { type: 'string', enum: ['S256'] }),
      query('prompt', '`consent` shows the consent page even when the person approved these scopes before.'),
      query('request_uri', 'The `request_uri` answered by `POST /oauth2/par`, usable once.'),
    ],
    responses: {
      200: { description: 'The consent page (HTML): the app\'s name, its developer and the scopes it asks for, each a box the person may untick.', content: { 'text/html': { schema: { type: 'string' } } } },
      302: {
        description:
          'To `redirect_uri` with `code`, `state` and `iss` once the person approves (the code works once, for 60 s, with the `code_verifier` of its challenge); with `error` (`access_denied`, `invalid_request`, `invalid_scope`, `unsupported_response_type`), `error_description` and `state` otherwise; or to `/login` first when no one is signed in.',
        headers: { location: { description: 'e.g. https://app.example/callback?code=sac_…&state=xyz&iss=https%3A%2F%2Fstride.example', schema: { type: 'string' } } },
      },
      400: { description: 'An error page (HTML) when the request cannot be answered at the redirect URI: unknown client_id, a redirect_uri not registered, a used or expired request_uri.', content: { 'text/html': { schema: { type: 'string' } } } },
    },
  },
};
