// A single-page app as a developer would write it with oauth4webapi: it runs on its own origin,
// keeps no secret (a public client with PKCE), and calls Stride with fetch (CORS). The page's
// <body> names Stride's address and the app's client_id; the outcome is written to #result.
import * as oauth from '/oauth4webapi.js';

const { issuer, clientId } = document.body.dataset;
const client = { client_id: clientId, token_endpoint_auth_method: 'none' };
const auth = oauth.None();
// Stride runs on http://127.0.0.1 in the tests; a deployed Stride is https and needs no option.
const options = { [oauth.allowInsecureRequests]: true };
const redirectUri = new URL('/callback', location.origin).href;
const profileUrl = new URL('/v1/users/me', issuer);

async function discover() {
  const issuerUrl = new URL(issuer);
  return oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, { algorithm: 'oauth2', ...options }));
}

async function connect() {
  const as = await discover();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }));
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'read_profile write_profile',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url);
}

async function readProfile(accessToken) {
  const response = await oauth.protectedResourceRequest(accessToken, 'GET', profileUrl, undefined, undefined, options);
  return response.json();
}

async function finish() {
  const as = await discover();
  const { verifier, state } = JSON.parse(sessionStorage.getItem('pkce'));
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, options),
  );
  const profile = await readProfile(tokens.access_token);
  const renamed = await (await oauth.protectedResourceRequest(
    tokens.access_token, 'PUT', profileUrl, new Headers({ 'content-type': 'application/json' }),
    JSON.stringify({ display_name: `${profile.display_name} (from the browser)` }), options,
  )).json();
  const refreshed = await oauth.processRefreshTokenResponse(
    as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token, options),
  );
  const afterRefresh = await readProfile(refreshed.access_token);
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.refresh_token, options));
  // After the revocation the API answers 401 with an RFC 6750 challenge, which the library reads
  // from WWW-Authenticate: a header the browser shows the app only if Stride exposes it.
  let afterRevocation;
  try {
    const response = await oauth.protectedResourceRequest(refreshed.access_token, 'GET', profileUrl, undefined, undefined, options);
    afterRevocation = { status: response.status, challenge: null };
  } catch (error) {
    afterRevocation = { status: error.response?.status, challenge: error.cause?.[0]?.parameters?.error };
  }
  document.querySelector('h1').textContent = `Connected as ${renamed.display_name}`;
  return { profileId: profile.id, renamedTo: renamed.display_name, scope: tokens.scope, refreshedProfileId: afterRefresh.id, afterRevocation };
}

const result = document.querySelector('#result');
if (location.pathname === '/callback') {
  finish().then(
    (outcome) => { result.textContent = JSON.stringify(outcome); },
    (error) => { result.textContent = JSON.stringify({ failed: `${error.name}: ${error.message}` }); },
  );
} else {
  document.querySelector('#connect').addEventListener('click', () => {
    connect().catch((error) => { result.textContent = JSON.stringify({ failed: `${error.name}: ${error.message}` }); });
  });
}
