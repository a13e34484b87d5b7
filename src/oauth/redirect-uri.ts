/**
 * Redirect URI checks (RFC 6749 §3.1.2, RFC 9700 §4.1.3): exact string comparison against the
 * registered URIs — no normalisation, trailing slash and case included.
 */
import type { App } from '../store/apps.js';

export function isRegisteredRedirectUri(app: App, uri: string): boolean {
  return app.redirectUris.includes(uri);
}

/**
 * The redirect URI of an authorization request: `redirect_uri` (RFC 6749 §3.1.2) or `redirect_url`
 * (an older name apps may still send, docs/oauth.md). Both may be sent only when they agree.
 * Returns an explanation when unusable.
 */
export function requestedRedirectUri(
  app: App,
  params: { redirect_uri?: string | undefined; redirect_url?: string | undefined },
): { uri: string } | { problem: string } {
  const { redirect_uri: rfcName, redirect_url: olderName } = params;
  if (rfcName !== undefined && olderName !== undefined && rfcName !== olderName) {
    return { problem: 'redirect_uri and redirect_url were both sent and differ.' };
  }
  const uri = rfcName ?? olderName;
  if (uri === undefined || uri === '') return { problem: 'The request has no redirect_uri.' };
  if (!isRegisteredRedirectUri(app, uri)) {
    return { problem: 'The redirect_uri is not one registered for this app (it must match exactly).' };
  }
  return { uri };
}

/** Only http(s) callbacks are shown as a host on the consent page; app schemes as they are. */
export function redirectHost(uri: string): string {
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : `${url.protocol}//`;
  } catch {
    return uri;
  }
}
