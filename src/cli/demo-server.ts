/**
 * `stride demo` runs beside the server, usually in a second terminal, and prints links to the
 * server at PUBLIC_URL (by default http://localhost:PORT). Run without the server's PORT or
 * PUBLIC_URL, its links would point at another address, or at a server on another database that
 * knows neither the demo user nor the app. Before it prints them, demo asks the server at the URL
 * it uses whether it is that Stride: a failure names what to set.
 */
import type { Config } from '../config.js';

/** How long the server may take to answer before demo gives up on it. */
const ANSWER_TIMEOUT_MS = 5000;

export class DemoServerProblem extends Error {}

/** One line, as every failure of the CLI: what to set, for either kind of server. */
const HOW_TO_POINT =
  "start the server first (npm start), or give demo the server's address: PORT=<the server's PORT> npm run stride -- demo for a server without PUBLIC_URL, PUBLIC_URL=<the server's PUBLIC_URL> npm run stride -- demo for one with it (and the server's DATABASE_URL if it has one)";

async function get(url: string): Promise<Response> {
  return fetch(url, { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS), redirect: 'manual' });
}

/** Before anything is written: a Stride answers at PUBLIC_URL and calls itself by that URL (RFC 8414 issuer). */
export async function checkServerAnswers(config: Config): Promise<void> {
  const metadataUrl = `${config.publicUrl}/.well-known/oauth-authorization-server`;
  let issuer: unknown;
  try {
    const response = await get(metadataUrl);
    if (response.status !== 200) throw new Error(`it answered ${response.status} to ${metadataUrl}`);
    issuer = ((await response.json()) as { issuer?: unknown }).issuer;
  } catch (error) {
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    throw new DemoServerProblem(`No Stride server answers at ${config.publicUrl}, where demo's links would point (${reason}): ${HOW_TO_POINT}`);
  }
  if (issuer !== config.publicUrl) {
    throw new DemoServerProblem(
      `The server at ${config.publicUrl} runs with PUBLIC_URL=${String(issuer)}, demo with ${config.publicUrl}, so its links would not match the server's. Run: PUBLIC_URL=${String(issuer)} npm run stride -- demo`,
    );
  }
}

/**
 * After the demo app is stored: the server knows it, so it reads the same database. Asked as a
 * browser asks, with the authorization request demo prints: a server that knows the app sends the
 * browser on (to sign in, 302); one that does not answers its error page (400). No credential is
 * sent, so the check counts as none of the app's traffic on its usage page.
 */
export async function checkServerKnowsApp(config: Config, clientId: string, redirectUri: string): Promise<void> {
  const request = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'demo-check' });
  const response = await get(`${config.authUrl}/oauth2/authorize?${request}`);
  if (response.status === 400) {
    throw new DemoServerProblem(
      `The server at ${config.publicUrl} does not know the demo app: it reads another database than demo. Run demo with the server's DATABASE_URL: DATABASE_URL=<the server's> npm run stride -- demo`,
    );
  }
  if (response.status !== 302 && response.status !== 303) throw new DemoServerProblem(`The server at ${config.publicUrl} answered ${response.status} when demo checked its app: ${HOW_TO_POINT}`);
}
