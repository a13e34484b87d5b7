/**
 * The consent page (docs/oauth.md, "Authorization request"): the app, its developer, each scope in
 * plain words with a checkbox — Stride's words, whether the app asked in Stride's scope names or in
 * Fitbit's (docs/oauth.md, "Fitbit clients"), and one line when it also asked for kinds of data
 * Stride does not hold.
 */
import type { FastifyReply } from 'fastify';
import type { AuthorizationRequest } from '../../oauth/authorize.js';
import { redirectHost } from '../../oauth/redirect-uri.js';
import { unheldWords } from '../../domain/scope-request.js';
import { SCOPES, type Scope } from '../../domain/scopes.js';
import { sessionCsrfToken } from '../csrf.js';
import type { Session } from '../session.js';
import type { App } from '../../store/apps.js';
import type { TestPerson } from '../../store/test-people.js';
import { codeSpans, sendPage } from '../views.js';

/**
 * `developer`: who made the app (developerName; null: it registered itself). `grantedBefore`: the user's
 * grant already covers these scopes — the page is shown anyway for a public app (RFC 8252 §8.6)
 * or with `prompt=consent`, and says so.
 */
export function renderConsent(
  reply: FastifyReply,
  session: Session,
  request: AuthorizationRequest,
  developer: string | null,
  grantedBefore = false,
  testPeople: readonly TestPerson[] = [],
): FastifyReply {
  const csrfToken = sessionCsrfToken(session);
  // The request travels in hidden fields and is validated again when the form comes back.
  // A pushed request (RFC 9126) travels as its request_uri: its parameters stay as the app pushed them.
  const hidden: Array<[string, string]> = request.pushed
    ? [['client_id', request.app.clientId], ['request_uri', request.pushed.requestUri]]
    : [
        ['response_type', 'code'],
        ['client_id', request.app.clientId],
        ['redirect_uri', request.redirectUri],
        // As the app worded it: the code remembers Fitbit's words for the token responses.
        ['scope', request.requestedScope ?? request.scopes.join(' ')],
      ];
  if (!request.pushed && request.state !== undefined) hidden.push(['state', request.state]);
  if (!request.pushed && request.codeChallenge !== null) {
    hidden.push(['code_challenge', request.codeChallenge], ['code_challenge_method', request.codeChallengeMethod ?? 'S256']);
  }
  return sendPage(reply, './consent', {
    title: `Allow ${request.app.name}?`,
    userName: session.user.display_name,
    csrfToken,
    appName: request.app.name,
    developer,
    selfRegistered: developer === null,
    description: codeSpans(request.app.description),
    // Shown as text only: a link would let the app lead the user away from the decision.
    website: request.app.websiteUrl,
    userEmail: session.user.email,
    redirectHost: redirectHost(request.redirectUri),
    hidden,
    action: '/oauth2/authorize',
    deviceNotice: null,
    grantedBefore,
    isPublic: request.app.isPublic,
    scopes: request.scopes.map((name) => ({ name, description: SCOPES[name as Scope], words: whoseWords(SCOPES[name as Scope]) })),
    asksUnheld: unheldWords(request.requestedScope).length > 0,
    consentAs: consentAsChoices(session, testPeople),
  });
}

/**
 * A scope's words around its "your", so that the page can name whose data it is when a test person
 * answers (assets/consent-as.js swaps the word as the developer chooses who answers).
 */
function whoseWords(description: string): { before: string; after: string } | null {
  const at = description.indexOf('your ');
  return at < 0 ? null : { before: description.slice(0, at), after: description.slice(at + 'your'.length) };
}

/**
 * The consent form's field that names who consents (docs/oauth.md, "Consenting as a test person"):
 * absent or the signed-in person's id for themselves, or the id of one of their test people.
 */
export const CONSENT_AS_FIELD = 'consent_as';

/** The chooser's options: the developer first, then each of their test people; none without test people. */
function consentAsChoices(session: Session, testPeople: readonly TestPerson[]) {
  if (testPeople.length === 0) return null;
  return {
    field: CONSENT_AS_FIELD,
    options: [
      { value: session.user.id, label: `Yourself (${session.user.email})`, whose: 'your' },
      ...testPeople.map((person) => ({ value: person.id, label: `${person.displayName} — ${person.email}`, whose: `${person.displayName}'s` })),
    ],
  };
}

/**
 * The same consent page for a device request (RFC 8628 §3.3): no redirect URI — the answer goes to
 * the device when it next polls — and the user code travels in the form.
 */
export function renderDeviceConsent(
  reply: FastifyReply,
  session: Session,
  request: { app: App; scopes: string[]; unheld: string[]; userCode: string },
  developer: string | null,
): FastifyReply {
  return sendPage(reply, './consent', {
    title: `Allow ${request.app.name}?`,
    userName: session.user.display_name,
    csrfToken: sessionCsrfToken(session),
    appName: request.app.name,
    developer,
    selfRegistered: developer === null,
    description: codeSpans(request.app.description),
    website: request.app.websiteUrl,
    userEmail: session.user.email,
    redirectHost: null,
    deviceNotice: `A device showing the code ${request.userCode} asks for this access. Choose Allow only if you see this code on your own device now.`,
    hidden: [['user_code', request.userCode]],
    action: '/device/consent',
    grantedBefore: false,
    isPublic: request.app.isPublic,
    scopes: request.scopes.map((name) => ({ name, description: SCOPES[name as Scope] })),
    asksUnheld: request.unheld.length > 0,
    consentAs: null,
  });
}
