/**
 * The peer: oidc-provider configured as the server people would pick instead of Stride — opaque
 * access tokens, refresh-token rotation, its default in-memory adapter, one confidential client,
 * and one public client (CLIENT_ID-public, no secret) for the DPoP loads: its DPoP feature is on
 * (RFC 9449, replays refused, without nonces, as Stride by default), so tokens obtained with a proof are bound to
 * the proof's key, and its refresh tokens too since the client is public.
 * Its development interactions (a login form that accepts any name, a one-button consent form)
 * let the benchmark script obtain tokens over HTTP; the loads themselves never touch them.
 *
 * Usage: node oidc-provider-peer.js PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI — prints "listening".
 */
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const [portArg, clientId, clientSecret, redirectUri] = process.argv.slice(2);
if (!portArg || !clientId || !clientSecret || !redirectUri) {
  process.stderr.write('usage: oidc-provider-peer PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI\n');
  process.exit(2);
}
const port = Number(portArg);

// One P-256 signing key (ID tokens are only issued while obtaining the load-1 token).
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingKey = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: 'bench' };

interface Client {
  grantTypeAllowed(type: string): boolean;
}

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'ES256',
    },
    {
      client_id: `${clientId}-public`,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [signingKey] },
  // Matches Stride's profile scope; `openid` is what userinfo (GET /me) needs.
  scopes: ['openid', 'offline_access', 'read_profile'],
  claims: { openid: ['sub'], profile: ['name', 'zoneinfo'] },
  async findAccount(_ctx: unknown, sub: string) {
    return {
      accountId: sub,
      async claims() {
        return { sub, name: 'Bench User', zoneinfo: 'UTC' };
      },
    };
  },
  features: {
    devInteractions: { enabled: true },
    // Its defaults, said here: proofs verified, each jti remembered (replays refused), no nonces.
    dPoP: { enabled: true, allowReplay: false },
  },
  // Opaque access tokens are the default format; refresh tokens for every code grant of a client
  // allowed the refresh_token grant (like Stride), each rotated on use.
  async issueRefreshToken(_ctx: unknown, client: Client) {
    return client.grantTypeAllowed('refresh_token');
  },
  rotateRefreshToken: true,
  cookies: { keys: ['stride-bench-cookie-key-0123456789abcdef'] },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 600,
    RefreshToken: 14 * 86400,
    Grant: 14 * 86400,
    Interaction: 3600,
    Session: 14 * 86400,
  },
});

// The reason behind a token endpoint error stays in the response's generic description; print it.
provider.on('grant.error', (_ctx: unknown, error: unknown) => {
  const { error_description: description, error_detail: detail } = error as { error_description?: string; error_detail?: string };
  process.stderr.write(`grant.error: ${description ?? ''} ${detail ?? ''}\n`);
});

const server = provider.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
server.keepAliveTimeout = 65_000;

const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
