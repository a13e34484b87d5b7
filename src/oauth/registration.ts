/**
 * Dynamic client registration (RFC 7591) and its management protocol (RFC 7592); decisions in
 * docs/decisions/0021-dynamic-client-registration.md. Registered metadata is validated by the same
 * rules as the dashboard's app form (domain/apps.ts), and the app belongs to REGISTRATION_OWNER.
 */
import type { AppContext } from '../context.js';
import { ApiError, REALM } from '../errors.js';
import { registerApp, updateAppSettings, validateAppSettings, type AppSettings } from '../domain/apps.js';
import { parseScopeString } from '../domain/scopes.js';
import { constantTimeEqual, hashCredential, newCredential, NO_CREDENTIAL_HASH } from '../security/secrets.js';
import type { App } from '../store/apps.js';
import { DEFAULT_GRANT_TYPES, REGISTRABLE_GRANT_TYPES } from './grant-types.js';
import { CLIENT_AUTH_METHODS } from './metadata.js';

/** The response types a registered client may name (its grant types: REGISTRABLE_GRANT_TYPES). */
const RESPONSE_TYPES = ['code'];
/** Without `scope`, a registered client may ask for the profile only. */
const DEFAULT_SCOPE = 'read_profile';

/** The metadata a registration request carries (RFC 7591 §2), as its schema types it. */
export interface ClientMetadataInput {
  redirect_uris?: string[];
  client_name?: string;
  token_endpoint_auth_method?: string;
  grant_types?: string[];
  response_types?: string[];
  scope?: string;
  client_uri?: string;
  [other: string]: unknown;
}

/** The metadata kept beside the app's own columns, read back by RFC 7592 (apps.registration_metadata). */
interface KeptMetadata {
  token_endpoint_auth_method: string;
  grant_types: string[];
  response_types: string[];
}

const metadataError = (description: string) => new ApiError('invalid_client_metadata', description);

/** RFC 7591 §2 and §3.2.2: the request's metadata as app settings, or the RFC's error. */
function readMetadata(input: ClientMetadataInput): { settings: AppSettings; isPublic: boolean; kept: KeptMetadata } {
  const method = input.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!CLIENT_AUTH_METHODS.includes(method)) {
    throw metadataError(`token_endpoint_auth_method must be one of ${CLIENT_AUTH_METHODS.join(', ')}`);
  }
  // Without grant_types, what a client of this server needs and what it always could use:
  // the code and its refresh (docs/decisions/0030-registered-grant-types.md).
  const grantTypes = input.grant_types ?? DEFAULT_GRANT_TYPES;
  const unknownGrant = grantTypes.find((grant) => !REGISTRABLE_GRANT_TYPES.includes(grant));
  if (unknownGrant !== undefined) throw metadataError(`grant_types may hold only ${REGISTRABLE_GRANT_TYPES.join(', ')}; "${unknownGrant}" is not served`);
  if (!grantTypes.includes('authorization_code')) throw metadataError('grant_types must include authorization_code');
  const responseTypes = input.response_types ?? ['code'];
  if (responseTypes.length === 0 || responseTypes.some((type) => !RESPONSE_TYPES.includes(type))) throw metadataError('response_types must be ["code"]');
  if (input.client_name === undefined) throw metadataError('client_name is required: the consent page shows it');
  const settings: AppSettings = {
    name: input.client_name,
    websiteUrl: input.client_uri ?? '',
    redirectUris: input.redirect_uris ?? [],
    scopes: parseScopeString(input.scope ?? DEFAULT_SCOPE),
    // The app may use exactly the grant types it registered, as its metadata says.
    grantTypes,
  };
  const problem = validateAppSettings(settings);
  if (problem) {
    const field = { name: 'client_name', websiteUrl: 'client_uri', scopes: 'scope', description: 'client_name', redirectUris: 'redirect_uris', grantTypes: 'grant_types' }[problem.field];
    throw new ApiError(problem.field === 'redirectUris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', `${field}: ${problem.message}`);
  }
  return { settings, isPublic: method === 'none', kept: { token_endpoint_auth_method: method, grant_types: grantTypes, response_types: responseTypes } };
}

/** RFC 7591 §3.2.1 / RFC 7592 §3: the client's metadata as registered. */
export function clientInformation(ctx: AppContext, app: App) {
  const kept = (app.registrationMetadata ?? {}) as Partial<KeptMetadata>;
  return {
    client_id: app.clientId,
    client_id_issued_at: app.createdAt,
    client_name: app.name,
    redirect_uris: app.redirectUris,
    token_endpoint_auth_method: kept.token_endpoint_auth_method ?? (app.isPublic ? 'none' : 'client_secret_basic'),
    // What the app may use (the registration's, unless its developer changed them since).
    grant_types: app.grantTypes.filter((grant) => REGISTRABLE_GRANT_TYPES.includes(grant)),
    response_types: kept.response_types ?? ['code'],
    scope: app.scopes.join(' '),
    ...(app.websiteUrl !== '' && { client_uri: app.websiteUrl }),
    registration_client_uri: registrationClientUri(ctx, app),
  };
}

export function registrationClientUri(ctx: AppContext, app: App): string {
  return `${ctx.config.publicUrl}/oauth2/register/${encodeURIComponent(app.clientId)}`;
}

/** 404 while REGISTRATION=off: the endpoints do not exist then. */
export function requireRegistrationEnabled(ctx: AppContext): void {
  if (ctx.config.registration.mode === 'off') throw new ApiError('not_found', 'dynamic client registration is off on this server (REGISTRATION)');
}

/** RFC 6750 §3: 401 with a Bearer challenge. */
function invalidToken(description: string, sent: boolean): ApiError {
  return new ApiError('invalid_token', description, {
    'www-authenticate': sent ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`,
  });
}

/** RFC 7591 §3: in token mode, the request must carry a live initial access token. */
export async function checkInitialAccessToken(ctx: AppContext, token: string | null): Promise<void> {
  if (ctx.config.registration.mode !== 'token') return;
  if (token === null) throw invalidToken('registration needs an initial access token: Authorization: Bearer <token> (stride registration-token create)', false);
  if (!(await ctx.stores.registrationTokens.isLive(hashCredential(token), ctx.clock()))) {
    throw invalidToken('the initial access token is unknown or expired', true);
  }
}

/** Makes an initial access token (the CLI's `registration-token create`); shown once. */
export async function createInitialAccessToken(ctx: Pick<AppContext, 'stores' | 'clock'>, expiresIn: number | null): Promise<{ token: string; expiresAt: number | null }> {
  const token = newCredential('initialAccessToken');
  const now = ctx.clock();
  const expiresAt = expiresIn === null ? null : now + expiresIn;
  await ctx.stores.registrationTokens.insert(hashCredential(token), expiresAt, now);
  return { token, expiresAt };
}

async function owner(ctx: AppContext): Promise<string> {
  const email = ctx.config.registration.owner!;
  const user = await ctx.stores.users.findByEmail(email);
  if (!user) throw new ApiError('temporarily_unavailable', 'registration is not set up: REGISTRATION_OWNER names no account');
  return user.id;
}

/** RFC 7591 §3.1–3.2: registers a client; its secret and registration access token are shown once. */
export async function registerClient(ctx: AppContext, input: ClientMetadataInput) {
  const { settings, isPublic, kept } = readMetadata(input);
  const ownerId = await owner(ctx);
  const registrationToken = newCredential('registrationAccessToken');
  const { app, clientSecret } = await registerApp(ctx.stores.apps, ctx.clock, ownerId, {
    ...settings,
    isPublic,
    registration: { tokenHash: hashCredential(registrationToken), metadata: { ...kept } },
  });
  return {
    ...clientInformation(ctx, app),
    ...(clientSecret !== null && { client_secret: clientSecret, client_secret_expires_at: 0 }),
    registration_access_token: registrationToken,
  };
}

/**
 * RFC 7592 §2: the registered app `clientId` names, if `token` is its registration access token.
 * Anything else — no token, a wrong one, an app not registered through RFC 7591, no such app — is
 * 401 (§2.1: an unknown client is answered as an unauthorized request).
 */
export async function registeredClient(ctx: AppContext, clientId: string, token: string | null): Promise<App> {
  if (token === null) throw invalidToken('the registration access token is required: Authorization: Bearer <registration_access_token>', false);
  const app = await ctx.stores.apps.findByClientId(clientId);
  const expected = app?.registrationTokenHash ?? NO_CREDENTIAL_HASH;
  // The comparison runs for every request alike; an app without a registration access token (made
  // on the dashboard or with the CLI) is never opened, whatever was sent.
  const matches = constantTimeEqual(hashCredential(token), expected);
  if (!matches || !app || app.registrationTokenHash === null) throw invalidToken('the registration access token is not valid for this client', true);
  return app;
}

/** Fields a client must not send in an update (RFC 7592 §2.2). */
const SERVER_FIELDS = ['registration_access_token', 'registration_client_uri', 'client_id_issued_at', 'client_secret_expires_at'];

/** RFC 7592 §2.2: replaces the client's metadata with the request's (omitted fields: their defaults). */
export async function updateRegisteredClient(ctx: AppContext, app: App, input: ClientMetadataInput) {
  if (input.client_id !== app.clientId) throw new ApiError('invalid_request', 'client_id must be sent, and be the client’s own');
  const sent = SERVER_FIELDS.find((name) => input[name] !== undefined);
  if (sent) throw new ApiError('invalid_request', `${sent} must not be sent in an update (RFC 7592 §2.2)`);
  if (input.client_secret !== undefined) {
    if (typeof input.client_secret !== 'string' || !constantTimeEqual(hashCredential(input.client_secret), app.clientSecretHash ?? '')) {
      throw new ApiError('invalid_request', 'client_secret, when sent, must be the client’s current secret');
    }
  }
  const { settings, isPublic, kept } = readMetadata(input);
  if (isPublic !== app.isPublic) throw metadataError(`token_endpoint_auth_method cannot change between none and a client secret`);
  const { app: updated } = await updateAppSettings(ctx.stores.apps, ctx.clock, app, { ...settings, description: app.description });
  await ctx.stores.apps.update(app.id, { registrationMetadata: { ...kept } }, ctx.clock());
  return clientInformation(ctx, { ...updated, registrationMetadata: { ...kept } });
}

/** RFC 7592 §2.3: deletes the client with its grants and tokens. */
export async function deleteRegisteredClient(ctx: AppContext, app: App): Promise<void> {
  await ctx.stores.apps.delete(app.id);
}
