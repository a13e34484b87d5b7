/**
 * Registering and changing apps: one set of rules shared by the developer dashboard and the CLI
 * (`stride apps …`), so both have the same effects (docs/oauth.md, "When tokens stop working").
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { invalidRequest, notFound } from '../errors.js';
import { firstUnknownScope, formatScopes } from './scopes.js';
import { hashCredential, newClientId, newCredential } from '../security/secrets.js';
import { reservedNameProblem } from './reserved-names.js';
import { unicodeTextProblem } from './users.js';
import { DEFAULT_GRANT_TYPES, DEVICE_CODE_GRANT_TYPE, GRANT_TYPE_NAMES } from '../oauth/grant-types.js';
import type { App, AppStore } from '../store/apps.js';
import type { Stores } from '../store/stores.js';
import { keepSubscriberSigning } from './sealed-client-secrets.js';

export const APP_NAME_MAX_LENGTH = 100;
export const APP_DESCRIPTION_MAX_LENGTH = 1000;
export const MAX_REDIRECT_URIS = 10;
/** The longest redirect URI or website an app may register. */
export const MAX_URL_LENGTH = 2000;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Returns why a redirect URI cannot be registered, or null when it can. Allowed: https URLs,
 * http on a loopback host (RFC 8252 §7.3, for development and native apps), and private-use
 * schemes with a dot such as com.example.app:/callback (RFC 8252 §7.1). Never a fragment
 * (RFC 6749 §3.1.2), never credentials in the URL.
 */
export function redirectUriProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `redirect URI "${value}" is not an absolute URL`;
  }
  if (value.length > MAX_URL_LENGTH) return `redirect URI is longer than ${MAX_URL_LENGTH} characters`;
  // Compared by exact string equality, so only the characters a URL can hold unescaped.
  if (/[\x00-\x20\x7f]/.test(value)) return 'a redirect URI must not contain spaces or control characters';
  if (value.includes('#')) return `redirect URI "${value}" must not contain a fragment`;
  if (url.username || url.password) return `redirect URI "${value}" must not contain credentials`;
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https') return null;
  if (scheme === 'http') {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? null
      : `redirect URI "${value}" must use https (http is allowed only for localhost)`;
  }
  if (['javascript', 'data', 'file', 'vbscript', 'blob', 'about', 'ftp', 'ws', 'wss'].includes(scheme)) {
    return `redirect URI "${value}" uses a scheme that is not allowed`;
  }
  return scheme.includes('.')
    ? null
    : `redirect URI "${value}" must use https, http on localhost, or a reverse-domain scheme like com.example.app:`;
}

/** The grant types an app may be allowed (docs/oauth.md, "Grant types per app"): oauth/grant-types.ts declares them. */
export const APP_GRANT_TYPES = GRANT_TYPE_NAMES;
export { DEFAULT_GRANT_TYPES, DEVICE_CODE_GRANT_TYPE };

export interface AppSettings {
  name: string;
  description?: string;
  websiteUrl?: string;
  redirectUris: string[];
  scopes: string[];
  /** Default DEFAULT_GRANT_TYPES. */
  grantTypes?: string[];
  /** Every token request must carry a DPoP proof (RFC 9449). */
  requireDpop?: boolean;
  /** Authorization requests only through PAR (RFC 9126 §6). */
  requirePar?: boolean;
}

export interface FieldProblem {
  field: 'name' | 'description' | 'websiteUrl' | 'redirectUris' | 'scopes' | 'grantTypes';
  message: string;
}

export function validateAppSettings(settings: Partial<AppSettings>): FieldProblem | null {
  if (settings.name !== undefined) {
    const name = settings.name.trim();
    if (name === '') return { field: 'name', message: 'name is required' };
    if (name.length > APP_NAME_MAX_LENGTH) {
      return { field: 'name', message: `name must be at most ${APP_NAME_MAX_LENGTH} characters` };
    }
    // Shown on consent pages: a control character would garble (or hide part of) the name.
    if (/\p{Cc}/u.test(name)) return { field: 'name', message: 'name must not contain control characters' };
    // Format characters (Unicode Cf) — bidirectional controls, zero-width spaces and joiners — and
    // line separators are invisible or reorder the text: a name could pass for another app's.
    if (/[\p{Cf}\p{Zl}\p{Zp}]/u.test(name)) {
      return { field: 'name', message: 'name must not contain invisible formatting characters (bidirectional controls, zero-width characters)' };
    }
    const textProblem = unicodeTextProblem('name', name) ?? reservedNameProblem('name', name);
    if (textProblem) return { field: 'name', message: textProblem };
  }
  if (settings.description !== undefined) {
    if (settings.description.length > APP_DESCRIPTION_MAX_LENGTH) {
      return { field: 'description', message: `description must be at most ${APP_DESCRIPTION_MAX_LENGTH} characters` };
    }
    // Line breaks and tabs are text; other control characters are not (and PostgreSQL refuses NUL).
    if (/[^\P{Cc}\t\n\r]/u.test(settings.description)) {
      return { field: 'description', message: 'description must not contain control characters other than line breaks and tabs' };
    }
  }
  if (settings.websiteUrl !== undefined && settings.websiteUrl.length > MAX_URL_LENGTH) {
    return { field: 'websiteUrl', message: `website must be at most ${MAX_URL_LENGTH} characters` };
  }
  if (settings.websiteUrl !== undefined && settings.websiteUrl !== '') {
    // The URL parser drops leading and trailing control characters; the stored text would keep them.
    let ok = !/[\x00-\x20\x7f]/.test(settings.websiteUrl);
    try {
      ok &&= ['http:', 'https:'].includes(new URL(settings.websiteUrl).protocol);
    } catch {
      ok = false;
    }
    if (!ok) return { field: 'websiteUrl', message: 'website must be an http(s) URL' };
  }
  if (settings.redirectUris !== undefined) {
    if (settings.redirectUris.length === 0) {
      return { field: 'redirectUris', message: 'at least one redirect URI is required' };
    }
    if (settings.redirectUris.length > MAX_REDIRECT_URIS) {
      return { field: 'redirectUris', message: `at most ${MAX_REDIRECT_URIS} redirect URIs` };
    }
    for (const uri of settings.redirectUris) {
      const problem = redirectUriProblem(uri);
      if (problem) return { field: 'redirectUris', message: problem };
    }
  }
  if (settings.scopes !== undefined) {
    if (settings.scopes.length === 0) return { field: 'scopes', message: 'choose at least one scope' };
    const unknown = firstUnknownScope(settings.scopes);
    if (unknown !== null) return { field: 'scopes', message: `unknown scope "${unknown}"` };
  }
  if (settings.grantTypes !== undefined) {
    const unknownType = settings.grantTypes.find((name) => !(APP_GRANT_TYPES as readonly string[]).includes(name));
    if (unknownType !== undefined) return { field: 'grantTypes', message: `unknown grant type "${unknownType.slice(0, 60)}"` };
    if (settings.grantTypes.length === 0) return { field: 'grantTypes', message: 'choose at least one grant type' };
  }
  return null;
}

function rejectInvalid(settings: Partial<AppSettings>): void {
  const problem = validateAppSettings(settings);
  if (problem) throw invalidRequest(problem.message);
}

export interface RegisteredApp {
  app: App;
  /** Shown once; null for public apps. */
  clientSecret: string | null;
}

export async function registerApp(
  apps: AppStore,
  clock: Clock,
  ownerId: string,
  settings: AppSettings & {
    isPublic: boolean;
    clientId?: string;
    /** RFC 7591: the registration access token's hash and the metadata kept to be read back. */
    registration?: { tokenHash: string; metadata: Record<string, unknown> };
  },
): Promise<RegisteredApp> {
  rejectInvalid(settings);
  const clientSecret = settings.isPublic ? null : newCredential('clientSecret');
  const now = clock();
  const app: App = {
    id: randomUUID(),
    clientId: settings.clientId ?? newClientId(),
    clientSecretHash: clientSecret === null ? null : hashCredential(clientSecret),
    ownerId,
    name: settings.name.trim(),
    description: settings.description?.trim() ?? '',
    websiteUrl: settings.websiteUrl?.trim() ?? '',
    redirectUris: [...new Set(settings.redirectUris)],
    scopes: formatScopes(settings.scopes).split(' '),
    isPublic: settings.isPublic,
    grantTypes: orderedGrantTypes(settings.grantTypes ?? DEFAULT_GRANT_TYPES),
    requireDpop: settings.requireDpop ?? false,
    requirePar: settings.requirePar ?? false,
    registrationTokenHash: settings.registration?.tokenHash ?? null,
    registrationMetadata: settings.registration?.metadata ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await apps.insert(app);
  return { app, clientSecret };
}

/** Known names, each once, in APP_GRANT_TYPES order. */
function orderedGrantTypes(names: readonly string[]): string[] {
  return APP_GRANT_TYPES.filter((name) => names.includes(name));
}

/**
 * How many users' grants a change to `scopes` would end (shown before saving; docs/oauth.md, "When
 * tokens stop working").
 */
export async function grantsInvalidatedByScopeChange(apps: AppStore, app: App, scopes: string[]): Promise<number> {
  const next = formatScopes(scopes);
  if (next === formatScopes(app.scopes)) return 0;
  return apps.countGrantsWithOtherScope(app.id, next);
}

/**
 * Applies changed settings. A change of the scope set ends every grant whose scope set differs from
 * the new one, with all its tokens (docs/oauth.md, "When tokens stop working"); returns how many
 * grants were ended.
 */
export async function updateAppSettings(
  apps: AppStore,
  clock: Clock,
  app: App,
  changes: Partial<AppSettings>,
): Promise<{ app: App; grantsRevoked: number }> {
  rejectInvalid(changes);
  const scopes = changes.scopes && formatScopes(changes.scopes);
  const scopeChanged = scopes !== undefined && scopes !== formatScopes(app.scopes);
  const changed = {
    ...(changes.name !== undefined && { name: changes.name.trim() }),
    ...(changes.description !== undefined && { description: changes.description.trim() }),
    ...(changes.websiteUrl !== undefined && { websiteUrl: changes.websiteUrl.trim() }),
    ...(changes.redirectUris !== undefined && { redirectUris: [...new Set(changes.redirectUris)] }),
    ...(scopes !== undefined && { scopes: scopes.split(' ') }),
    ...(changes.grantTypes !== undefined && { grantTypes: orderedGrantTypes(changes.grantTypes) }),
    ...(changes.requireDpop !== undefined && { requireDpop: changes.requireDpop }),
    ...(changes.requirePar !== undefined && { requirePar: changes.requirePar }),
  };
  const { app: updated, grantsEnded } = await apps.update(app.id, changed, clock(), scopeChanged ? scopes : undefined);
  if (!updated) throw notFound('the app no longer exists');
  return { app: updated, grantsRevoked: grantsEnded };
}

/**
 * Issues a new client secret; the old one stops working at once. Public apps have none. The app's
 * Fitbit-compatible subscriber, if it has one, signs with the new one.
 */
export async function rotateClientSecret(stores: Pick<Stores, 'apps' | 'serverSecret' | 'fitbitSubscriptions'>, clock: Clock, app: App): Promise<string> {
  if (app.isPublic) throw invalidRequest('public apps have no client secret');
  const clientSecret = newCredential('clientSecret');
  await stores.apps.update(app.id, { clientSecretHash: hashCredential(clientSecret) }, clock());
  await keepSubscriberSigning(stores, clock, app.id, clientSecret);
  return clientSecret;
}
