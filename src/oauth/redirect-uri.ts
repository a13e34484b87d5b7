/**
 * Redirect URI checks (RFC 6749 §3.1.2, RFC 9700 §4.1.3): exact string comparison against the
 * registered URIs — no normalisation, trailing slash and case included — with the one exception
 * RFC 9700 §2.1 makes: the port of a loopback redirect URI of a native app (RFC 8252 §7.3).
 */
import type { App } from '../store/apps.js';

export function isRegisteredRedirectUri(app: App, uri: string): boolean {
  if (app.redirectUris.includes(uri)) return true;
  // RFC 8252 §7.3: a native app listens on a port the system gives it at the time of the request,
  // so a public app's `http://127.0.0.1/…` or `http://[::1]/…` matches with any port. The rest of
  // the URI (the host literal, path and query) is still compared as a string.
  if (!app.isPublic) return false;
  const requested = splitLoopbackUri(uri);
  return requested !== null && app.redirectUris.some((registered) => {
    const loopback = splitLoopbackUri(registered);
    return loopback !== null && loopback.host === requested.host && loopback.rest === requested.rest;
  });
}

/** `http://` + a loopback IP literal + an optional port (1–65535, no leading zero) + the rest. */
const LOOPBACK_URI = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::([1-9][0-9]{0,4}))?([/?].*)?$/s;

function splitLoopbackUri(uri: string): { host: string; rest: string } | null {
  const match = LOOPBACK_URI.exec(uri);
  if (!match || (match[2] !== undefined && Number(match[2]) > 65_535)) return null;
  return { host: match[1]!, rest: match[3] ?? '' };
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
