/**
 * The account page (docs/web.md, `/account`): the profile, edited with the same rules as
 * PUT /v1/users/me, and the connected apps, each with a Revoke button that ends every token of
 * that app for this user (docs/oauth.md, "When tokens stop working").
 */
import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../errors.js';
import { changedFields, EDITABLE_FIELDS, parseProfileChanges, profileOf, type EditableField, type ProfileChanges } from '../../domain/profile.js';
import { SCOPES, type Scope } from '../../domain/scopes.js';
import { constantTimeEqual } from '../../security/secrets.js';
import { formatTime, isoTime, signedInLayout, text, type Form } from '../forms.js';
import { formOn, sessionOf } from '../signed-in.js';
import type { Session } from '../session.js';
import { sendPage } from '../views.js';
import { StrideChangeTooSoon } from '../../store/stride-changes.js';
import { takeDraft } from '../form-drafts.js';
import { ACCOUNT_DATA_OUTCOMES } from './account-data.js';
import { importsOf } from '../../domain/takeout/imports.js';
import { bytesText, importListItem } from './import-view.js';

/** The profile form as typed: every field a string. */
type ProfileForm = Record<EditableField, string>;
/** Problems next to their fields: the profile's, the password forms', and the deletion's (`delete`). */
type ProfileErrors = Partial<Record<EditableField | 'current_password' | 'new_password' | 'delete_password' | 'delete', string>>;
/** The sections of the account page; a notice is shown in the one it is about. */
type Section = 'profile' | 'connected' | 'sessions' | 'password' | 'delete';
type Notice = { section: Section; text: string } | null;

const FIELD_LABELS: Record<EditableField, string> = {
  display_name: 'Display name',
  timezone: 'Time zone',
  daily_step_goal: 'Daily step goal',
  stride_length_cm: 'Stride length',
  birth_year: 'Year of birth',
  max_heart_rate: 'Maximum heart rate',
};

/** The fields a person may leave empty: empty is null, as the API takes it. */
const OPTIONAL_FIELDS: ReadonlySet<EditableField> = new Set(['stride_length_cm', 'birth_year', 'max_heart_rate']);

const optionalText = (value: number | null) => (value === null ? '' : String(value));

/** The imports of Takeout archives listed on the page, newest first. */
const RECENT_IMPORTS = 5;

/** IANA names offered as suggestions in the time zone field. */
const TIME_ZONES: string[] = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];

function formOf(session: Session): ProfileForm {
  const profile = profileOf(session.user);
  return {
    display_name: profile.display_name,
    timezone: profile.timezone,
    daily_step_goal: String(profile.daily_step_goal),
    stride_length_cm: optionalText(profile.stride_length_cm),
    birth_year: optionalText(profile.birth_year),
    max_heart_rate: optionalText(profile.max_heart_rate),
  };
}

/** Form text as the JSON value the API would receive, so the API's checks apply unchanged. */
function asJsonValue(field: EditableField, value: string): unknown {
  if (field === 'display_name' || field === 'timezone') return value;
  const trimmed = value.trim();
  if (OPTIONAL_FIELDS.has(field) && trimmed === '') return null;
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/** Each field checked on its own by the API's rules, so every problem shows next to its field. */
function parseProfileForm(form: ProfileForm, now: number): { changes: ProfileChanges; errors: ProfileErrors } {
  const changes: ProfileChanges = {};
  const errors: ProfileErrors = {};
  for (const field of EDITABLE_FIELDS) {
    try {
      Object.assign(changes, parseProfileChanges({ [field]: asJsonValue(field, form[field]) }, now));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const message = error.description.startsWith(field) ? `${FIELD_LABELS[field]}${error.description.slice(field.length)}` : error.description;
      errors[field] = `${message}.`;
    }
  }
  return { changes, errors };
}

/**
 * Proof, carried in the redirect after a revocation, that this session made it: an HMAC of the
 * app id under the session's secret. A link someone else crafts cannot carry one, so the page
 * never announces a revocation that did not happen.
 */
function revocationProof(session: Session, appId: string): string {
  return createHmac('sha256', session.csrfSecret).update(`account-revoked:${appId}`).digest('base64url');
}

function isRevocationProof(session: Session, appId: unknown, proof: unknown): appId is string {
  return typeof appId === 'string' && typeof proof === 'string' && constantTimeEqual(proof, revocationProof(session, appId));
}

/** A short name for the browser a session was made in, from its User-Agent. */
export function describeDevice(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const browser = /Edg\//.test(userAgent) ? 'Edge' : /Firefox\//.test(userAgent) ? 'Firefox' : /Chrom(e|ium)\//.test(userAgent) ? 'Chrome' : /Safari\//.test(userAgent) ? 'Safari' : /curl\//.test(userAgent) ? 'curl' : 'A browser';
  const system = /Android/.test(userAgent) ? 'Android' : /iPhone|iPad/.test(userAgent) ? 'iOS' : /Windows/.test(userAgent) ? 'Windows' : /Mac OS X/.test(userAgent) ? 'macOS' : /Linux/.test(userAgent) ? 'Linux' : null;
  return system ? `${browser} on ${system}` : browser;
}

export async function accountPages(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;

  async function sendAccount(
    reply: FastifyReply,
    session: Session,
    options: { form?: ProfileForm; errors?: ProfileErrors; notice?: Notice } = {},
    status = 200,
  ): Promise<FastifyReply> {
    const zone = session.user.timezone;
    const connected = (await stores.grants.listConnectedApps(session.user.id)).map((c) => ({
      ...c,
      scopeWords: c.scopes.map((name) => SCOPES[name as Scope] ?? name),
      granted: { iso: isoTime(c.grantedAt), text: formatTime(c.grantedAt, zone) },
      lastUsed: c.lastUsedAt === null ? null : { iso: isoTime(Number(c.lastUsedAt)), text: formatTime(Number(c.lastUsedAt), zone) },
    }));
    const sessions = (await stores.sessions.listLive(session.user.id, clock())).map((s) => ({
      id: s.idHash,
      current: s.idHash === session.idHash,
      device: describeDevice(s.userAgent),
      address: s.address ?? 'unknown',
      lastSeen: { iso: isoTime(s.lastSeenAt), text: formatTime(s.lastSeenAt, zone) },
    }));
    return sendPage(reply, './account', {
      ...signedInLayout(session, 'Your account', 'account'),
      wide: true,
      email: session.user.email,
      sessions,
      form: options.form ?? formOf(session),
      errors: options.errors ?? {},
      notice: options.notice ?? null,
      connected,
      timeZones: TIME_ZONES,
      imports: (await importsOf(stores, session.user.id, RECENT_IMPORTS)).map(importListItem),
      maxArchiveSize: bytesText(app.ctx.config.takeout.maxArchiveBytes),
    }, status);
  }

  app.get('/account', async (request, reply) => {
    const session = sessionOf(request);
    const query = request.query as Form;
    const draft = await takeDraft(request, reply, session, '/account');
    if (draft) {
      const form = Object.fromEntries(EDITABLE_FIELDS.map((field) => [field, text(draft[field])])) as ProfileForm;
      return sendAccount(reply, session, { form, notice: { section: 'profile', text: 'Your session ended before your profile was saved. What you typed is back: check it and save again.' } });
    }
    let notice: Notice = null;
    const errors: ProfileErrors = {};
    if (query.saved === 'profile') notice = { section: 'profile', text: 'Your profile is saved.' };
    for (const [section, outcomes] of Object.entries(ACCOUNT_DATA_OUTCOMES) as Array<[keyof typeof ACCOUNT_DATA_OUTCOMES, (typeof ACCOUNT_DATA_OUTCOMES)[keyof typeof ACCOUNT_DATA_OUTCOMES]]>) {
      const outcome = Object.hasOwn(outcomes, text(query[section])) ? outcomes[text(query[section])]! : undefined;
      if (outcome?.field) errors[outcome.field] = outcome.text;
      else if (outcome) notice = { section, text: outcome.text };
    }
    if (isRevocationProof(session, query.revoked, query.proof)) {
      const revoked = await stores.apps.findById(query.revoked);
      notice = { section: 'connected', text: `${revoked?.name ?? 'The app'} can no longer access your account. Its tokens are revoked.` };
    }
    return sendAccount(reply, session, { notice, errors });
  });

  app.post('/account/profile', { config: formOn('/account') }, async (request, reply) => {
    const session = sessionOf(request);
    const body = request.body as Form;
    const form = Object.fromEntries(EDITABLE_FIELDS.map((field) => [field, text(body[field])])) as ProfileForm;
    const { changes, errors } = parseProfileForm(form, clock());
    if (Object.keys(errors).length > 0) return sendAccount(reply, session, { form, errors }, 400);
    // The form sends every field: the change, and its profile.updated event, is what differs.
    const changed = changedFields(profileOf(session.user), changes);
    try {
      if (Object.keys(changed).length > 0) await stores.users.updateProfile(session.user.id, changed, clock());
    } catch (error) {
      if (!(error instanceof StrideChangeTooSoon)) throw error;
      return sendAccount(reply, session, { form, errors: { stride_length_cm: `You changed your stride length a moment ago; you can change it again in ${error.retryAfterSeconds} seconds.` } }, 429);
    }
    return reply.redirect('/account?saved=profile', 303);
  });

  app.post('/account/connected-apps/:appId/revoke', { config: formOn('/account') }, async (request, reply) => {
    const session = sessionOf(request);
    const { appId } = request.params as { appId: string };
    // Ends the grant with every code, access and refresh token under it, on every process.
    const ended = await stores.grants.revokeForUser(session.user.id, appId, app.ctx.clock());
    if (!ended) return reply.redirect('/account', 303);
    return reply.redirect(`/account?revoked=${encodeURIComponent(appId)}&proof=${revocationProof(session, appId)}`, 303);
  });
}
