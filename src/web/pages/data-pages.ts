/**
 * The "Your data" pages (docs/web.md): a person's own data in charts — `/account/data`, the last
 * 30, 90 or 365 days, and `/account/data/{date}`, one day by the minute — and the same pages of a
 * developer's test people under `/dashboard/test-people/{id}/data`. A person is only ever shown
 * their own data (no page names anyone else), and a developer only their own test people's,
 * found by the test people store's ownership check: anyone else's, or an id that cannot be one, is
 * the 404 that no such person gets.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createDailySummaryReader } from '../../domain/daily-summary-reader.js';
import { profileOf } from '../../domain/profile.js';
import { createStepSeriesReader } from '../../domain/step-series.js';
import type { User } from '../../store/users.js';
import { signedInLayout, text, type Form } from '../forms.js';
import { sessionOf } from '../signed-in.js';
import type { Session } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';
import { dayOf, readDay, type DayReads } from './data-day.js';
import { PERIODS, periodOf, readOverview, type DataPerson } from './data-overview.js';
import { TEST_PEOPLE_PAGE } from './test-people.js';

export const OWN_DATA_PAGE = '/account/data';

/** Whose data a page shows, and how the page speaks of them. */
interface Whose {
  person: DataPerson;
  /** The overview's path; a day's is under it. */
  base: string;
  own: boolean;
  name: string;
  section: 'account' | 'dashboard';
}

function personOf(user: User): DataPerson {
  const profile = profileOf(user);
  return { userId: profile.id, timezone: profile.timezone, strideCm: profile.stride_length_cm, goal: profile.daily_step_goal };
}

const own = (session: Session): Whose => ({ person: personOf(session.user), base: OWN_DATA_PAGE, own: true, name: session.user.display_name, section: 'account' });

export async function dataPages(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const reads: DayReads = {
    summary: createDailySummaryReader(stores.summary),
    steps: createStepSeriesReader(stores.steps.sums),
    heartRateDays: stores.heartRate.readDays,
    sleep: stores.sleep,
  };

  /** The developer's test person `id` names, or null after answering 404 — the same for anyone else's and no one's. */
  async function testPerson(request: FastifyRequest, reply: FastifyReply, session: Session): Promise<Whose | null> {
    const { id } = request.params as { id: string };
    const found = await stores.testPeople.findOwned(session.user.id, id);
    const user = found && (await stores.users.findById(found.id));
    if (!found || !user) {
      await sendErrorPage(reply, 404, 'Test person not found', 'There is no test person with this id among yours.', { href: TEST_PEOPLE_PAGE, label: 'Back to your test people' });
      return null;
    }
    return { person: personOf(user), base: `${TEST_PEOPLE_PAGE}/${encodeURIComponent(found.id)}/data`, own: false, name: found.displayName, section: 'dashboard' };
  }

  async function sendOverview(request: FastifyRequest, reply: FastifyReply, session: Session, whose: Whose) {
    const period = periodOf(text((request.query as Form).days));
    const overview = await readOverview(reads, whose.person, period, clock(), (date) => `${whose.base}/${date}`);
    const title = whose.own ? 'Your data' : `Data of ${whose.name}`;
    return sendPage(reply, './data', {
      ...signedInLayout(session, `${title}, last ${period} days`, whose.section),
      heading: title,
      whose,
      overview,
      periods: PERIODS.map((days) => ({ days, href: `${whose.base}?days=${days}`, current: days === period })),
    });
  }

  async function sendDay(request: FastifyRequest, reply: FastifyReply, session: Session, whose: Whose) {
    const now = clock();
    const day = dayOf((request.params as { date: string }).date, whose.person.timezone, now);
    if (!day) return sendErrorPage(reply, 404, 'No such day', 'This is not a date of the calendar up to today.', { href: whose.base, label: 'Back to the overview' });
    const view = await readDay(reads, whose.person, day, now);
    return sendPage(reply, './data-day', {
      ...signedInLayout(session, `${whose.own ? 'Your data' : `Data of ${whose.name}`}, ${view.dateText}`, whose.section),
      whose,
      day: view,
    });
  }

  app.get(OWN_DATA_PAGE, async (request, reply) => {
    const session = sessionOf(request);
    return sendOverview(request, reply, session, own(session));
  });

  app.get(`${OWN_DATA_PAGE}/:date`, async (request, reply) => {
    const session = sessionOf(request);
    return sendDay(request, reply, session, own(session));
  });

  app.get(`${TEST_PEOPLE_PAGE}/:id/data`, async (request, reply) => {
    const session = sessionOf(request);
    const whose = await testPerson(request, reply, session);
    return whose ? sendOverview(request, reply, session, whose) : reply;
  });

  app.get(`${TEST_PEOPLE_PAGE}/:id/data/:date`, async (request, reply) => {
    const session = sessionOf(request);
    const whose = await testPerson(request, reply, session);
    return whose ? sendDay(request, reply, session, whose) : reply;
  });
}
