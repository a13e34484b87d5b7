/**
 * The redirect URI a page uses when it builds an authorization request for a developer (the app
 * page's "Try it", "Connect a test person"): one on this server's own origin where the app has one
 * (the demo app's `/demo/callback`, which answers here), else the app's first.
 */
import type { App } from '../store/apps.js';

export function developerRedirectUri(app: App, publicUrl: string): string {
  const origin = new URL(publicUrl).origin;
  const own = app.redirectUris.find((uri) => {
    try {
      return new URL(uri).origin === origin;
    } catch {
      return false;
    }
  });
  return own ?? app.redirectUris[0] ?? '';
}
