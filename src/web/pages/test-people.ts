/**
 * The developer's test people on the dashboard (docs/web.md, "Test people"): adding them, and per
 * person the sandbox's actions — Sync now, Late sync, Revoke app, Change time zone — each made by
 * src/domain/test-people.ts through the store calls a real person's same action uses.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { WrittenCounts } from '../../domain/person-data.js';
import {
  addTestPeople,
  changeTestPersonZone,
  LATE_SYNC_DAYS_AGO,
  LIFE_NAMES,
  lateSyncTestPerson,
  lateWalkDate,
  revokeTestPersonApp,
  syncTestPerson,
  type SandboxSettings,
} from '../../domain/test-people.js';
import { isLifeName } from '../../domain/synthetic-person.js';
import type { TestPerson } from '../../store/test-people.js';
import { formatTime, signedInLayout, text, type Form } from '../forms.js';
import { formOn, sessionOf } from '../signed-in.js';
import { FORM_ID_FIELD, formIdOfPage, formMade, isFormId, pageWithFormId } from '../form-ids.js';
import type { Session } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';

export const TEST_PEOPLE_PAGE = '/dashboard/test-people';

/** Zones offered by "Change time zone"; any IANA name is accepted. */
const ZONE_SUGGESTIONS = ['Europe/Berlin', 'Europe/London', 'America/New_York', 'America/Los_Angeles', 'Asia/Kolkata', 'Asia/Tokyo', 'Australia/Sydney', 'UTC'];

export async function testPeoplePages(app: FastifyInstance): Promise<void> {
  app.get(TEST_PEOPLE_PAGE, showTestPeople);
  app.post(TEST_PEOPLE_PAGE, { config: { formPage: (_path, form) => pageWithFormId(TEST_PEOPLE_PAGE, form[FORM_ID_FIELD]) } }, addFromForm);
  app.post(`${TEST_PEOPLE_PAGE}/:id/:action`, { config: formOn(TEST_PEOPLE_PAGE) }, act);
}

function settingsOf(request: FastifyRequest): SandboxSettings {
  const { config } = request.server.ctx;
  return { days: config.sandbox.days, coalesceSeconds: config.webhooks.coalesceSeconds };
}

async function sendTestPeople(
  request: FastifyRequest,
  reply: FastifyReply,
  session: Session,
  notice: string | null,
  error: { person: string | null; text: string } | null = null,
  status = 200,
  formId: string | null = null,
) {
  const { stores } = request.server.ctx;
  const people = await stores.testPeople.listOf(session.user.id);
  const ownApps = new Set((await stores.apps.list(session.user.id)).map((app) => app.id));
  const views = [];
  for (const person of people) {
    const connected = (await stores.grants.listConnectedApps(person.id)).filter((app) => ownApps.has(app.appId));
    views.push({
      ...person,
      path: `${TEST_PEOPLE_PAGE}/${encodeURIComponent(person.id)}`,
      lifeText: isLifeName(person.life) ? `${LIFE_NAMES[person.life].title}, ${LIFE_NAMES[person.life].place}` : person.life,
      syncedText: formatTime(person.syncedUntil, person.timezone),
      connected,
      error: error?.person === person.id ? error.text : null,
    });
  }
  return sendPage(reply, './test-people', {
    ...signedInLayout(session, 'Test people', 'dashboard'),
    people: views,
    notice,
    error: error?.person === null ? error.text : null,
    formId,
    days: request.server.ctx.config.sandbox.days,
    lateDays: LATE_SYNC_DAYS_AGO,
    zones: ZONE_SUGGESTIONS,
  }, status);
}

async function showTestPeople(request: FastifyRequest, reply: FastifyReply) {
  const session = sessionOf(request);
  // "Add test people" makes something: its page carries the form's id (form-ids.ts).
  const formId = formIdOfPage(request, reply);
  if (formId === null) return reply;
  const query = request.query as Form;
  return sendTestPeople(request, reply, session, await noticeOf(request, session, query), null, 200, formId);
}

const NOTICES: Record<string, string> = {
  added: 'Your test people are ready, each with their days of data. Connect one to your app from its consent page.',
  synced: 'Synced: the data since the last sync was added, with its events.',
  'synced-nothing': 'Nothing to sync: no time has passed since the last sync.',
  'synced-meanwhile': 'Another sync of this person ran at the same moment; theirs added the data.',
  late: `Late sync: a walk ${LATE_SYNC_DAYS_AGO} days ago was added, with its events.`,
  revoked: 'The app was revoked: its grant and tokens for this person ended, and it heard of it.',
  'not-connected': 'That app had no grant for this person: nothing changed.',
  zone: 'The time zone was changed; the apps allowed to read the profile heard of it.',
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The notice of what was just done; a late sync's names the person and the walk's date (from the address, checked). */
async function noticeOf(request: FastifyRequest, session: Session, query: Form): Promise<string | null> {
  const done = text(query.done);
  if (done === 'late') {
    const person = await request.server.ctx.stores.testPeople.findOwned(session.user.id, text(query.person));
    const date = text(query.date);
    if (person && DATE.test(date)) return `Late sync of ${person.displayName}: a walk on ${date} (${LATE_SYNC_DAYS_AGO} days ago, their time) was added, with its events.`;
  }
  return Object.hasOwn(NOTICES, done) ? NOTICES[done]! : null;
}

async function addFromForm(request: FastifyRequest, reply: FastifyReply) {
  const body = request.body as Form;
  const session = sessionOf(request);
  const { stores, clock } = request.server.ctx;
  // Named by the form (form-ids.ts): the same form sent again makes no second four.
  const formId = body[FORM_ID_FIELD];
  const batch = isFormId(formId) ? formMade(session, 'test-people', formId, []).slice(0, 12) : undefined;
  try {
    await addTestPeople(stores, session.user, clock(), settingsOf(request), batch);
  } catch (error) {
    if (error instanceof ApiError) return sendTestPeople(request, reply, session, null, { person: null, text: error.message }, error.status);
    throw error;
  }
  return reply.redirect(`${TEST_PEOPLE_PAGE}?done=added`, 303);
}

/** What a sync wrote, as the notice's key. */
function syncOutcome(written: WrittenCounts | null): string {
  if (written === null) return 'synced-meanwhile';
  return Object.values(written).some((count) => (count ?? 0) > 0) ? 'synced' : 'synced-nothing';
}

async function act(request: FastifyRequest, reply: FastifyReply) {
  const session = sessionOf(request);
  const { stores, clock } = request.server.ctx;
  const { id, action } = request.params as { id: string; action: string };
  const person = await stores.testPeople.findOwned(session.user.id, id);
  // The same answer for no such person and someone else's.
  if (!person) return sendErrorPage(reply, 404, 'Test person not found', 'There is no test person with this id among yours.', { href: TEST_PEOPLE_PAGE, label: 'Back to your test people' });
  const form = request.body as Form;
  const now = clock();
  switch (action) {
    case 'sync':
      return done(reply, syncOutcome(await syncTestPerson(stores, person, now, settingsOf(request))));
    case 'late-sync':
      await lateSyncTestPerson(stores, person, now, settingsOf(request));
      return reply.redirect(`${TEST_PEOPLE_PAGE}?${new URLSearchParams({ done: 'late', person: person.id, date: lateWalkDate(person, now) })}`, 303);
    case 'revoke': {
      const app = (await stores.apps.list(session.user.id)).find((own) => own.id === text(form.app_id));
      if (!app) return refuse(request, reply, session, person, 'app_id must name one of your apps that this person has connected');
      return done(reply, (await revokeTestPersonApp(stores, person, app.id, now)) ? 'revoked' : 'not-connected');
    }
    case 'time-zone':
      try {
        await changeTestPersonZone(stores, person, text(form.timezone), now);
      } catch (error) {
        if (error instanceof ApiError) return refuse(request, reply, session, person, error.message);
        throw error;
      }
      return done(reply, 'zone');
    default:
      return sendErrorPage(reply, 404, 'Not found', 'There is no such action for a test person.', { href: TEST_PEOPLE_PAGE, label: 'Back to your test people' });
  }
}

function done(reply: FastifyReply, outcome: string) {
  return reply.redirect(`${TEST_PEOPLE_PAGE}?done=${outcome}`, 303);
}

/** A bad field: the page again, 400, the message beside the person's form. */
function refuse(request: FastifyRequest, reply: FastifyReply, session: Session, person: TestPerson, message: string) {
  return sendTestPeople(request, reply, session, null, { person: person.id, text: message }, 400);
}
