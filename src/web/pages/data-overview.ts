/**
 * The overview of a person's data (docs/web.md, "Your data"): their last 30, 90 or 365 days —
 * steps per day against their goal, resting heart rate per day, sleep per night by stage, and
 * weight — read as the API reads them: the daily summary (domain/daily-summary-reader.ts) for the
 * figures of each day, the sleep store for the stages of each night. Each kind becomes a chart
 * (data-charts.ts) with its numbers in a table; a kind with nothing in the range becomes a
 * sentence instead, and so does the whole page when nothing of any kind is there.
 */
import { DateTime } from 'luxon';
import type { SummaryDay, SummaryField } from '../../domain/daily-summary.js';
import type { DailySummaryReader } from '../../domain/daily-summary-reader.js';
import { localDateOf, parseDateRange, profileZone } from '../../domain/local-dates.js';
import type { SleepStageName, SleepStore } from '../../store/sleep.js';
import { barChart, endsAndMiddle, lineChart, type Chart } from './data-charts.js';
import { amount, dateRange, duration, fixed, hoursAndMinutes, kilograms, shortDate } from './data-words.js';

/** The periods a person can look at, in days ending today. */
export const PERIODS = [30, 90, 365] as const;
export type Period = (typeof PERIODS)[number];

/** The period a query asks for (`?days=`), else the first. */
export function periodOf(days: unknown): Period {
  return PERIODS.find((period) => String(period) === days) ?? PERIODS[0];
}

/**
 * A day in a table: "29 Nov", without its year — the table's caption gives the range, and a range
 * of at most 365 days holds each day of the year once — so that a phone has room for the numbers.
 */
const rowDate = (date: string) => shortDate(date);

/** Whose data: the person, their profile's zone, stride length and daily step goal. */
export interface DataPerson {
  userId: string;
  timezone: string;
  strideCm: number | null;
  goal: number;
}

/** The stages of a night, stacked from the bottom in this order. */
export const STAGES: ReadonlyArray<{ stage: SleepStageName; word: string }> = [
  { stage: 'deep', word: 'deep' },
  { stage: 'light', word: 'light' },
  { stage: 'rem', word: 'REM' },
  { stage: 'awake', word: 'awake' },
];

/** The summary's fields the pages show: a person sees all of these of their own data. */
export const SHOWN_SUMMARY_FIELDS: ReadonlySet<SummaryField> = new Set<SummaryField>(['steps', 'distance', 'calories', 'resting_heart_rate', 'minutes_asleep', 'weight']);

/** What the overview reads through. */
export interface OverviewReads {
  summary: DailySummaryReader;
  sleep: SleepStore;
}

/** The local dates of the period ending today in `zone`. */
function periodDates(period: Period, zone: string, now: number): { first: string; last: string } {
  const today = DateTime.fromSeconds(now, { zone: profileZone(zone) });
  return { first: today.minus({ days: period - 1 }).toISODate()!, last: today.toISODate()! };
}

/** Minutes of each stage per local date of the sessions' ends (the date the API gives a session). */
async function nightsByStage(sleep: SleepStore, person: DataPerson, first: string, last: string, now: number): Promise<Map<string, Record<SleepStageName, number>>> {
  const range = parseDateRange({ start_date: first, end_date: last }, person.timezone, now, { defaultDays: 1, maxDays: 365 });
  const nights = new Map<string, Record<SleepStageName, number>>();
  for (const session of await sleep.endingWithin(person.userId, range.from, range.to)) {
    const date = localDateOf(session.end_time, range.timezone);
    const night = nights.get(date) ?? { deep: 0, light: 0, rem: 0, awake: 0 };
    for (const stage of session.stages) night[stage.stage] += (stage.end_time - stage.start_time) / 60;
    nights.set(date, night);
  }
  return nights;
}

export async function readOverview(reads: OverviewReads, person: DataPerson, period: Period, now: number, dayHref: (date: string) => string) {
  const { first, last } = periodDates(period, person.timezone, now);
  const [summary, nights] = await Promise.all([
    reads.summary(person, { start_date: first, end_date: last }, SHOWN_SUMMARY_FIELDS, now),
    nightsByStage(reads.sleep, person, first, last, now),
  ]);
  const days = summary.days;
  const withYear = period === 365 || first.slice(0, 4) !== last.slice(0, 4);
  const labels = { x: endsAndMiddle(days.map((day) => shortDate(day.date, withYear))) };
  const shown = { days, labels, rangeText: dateRange(first, last), dayHref };
  const overview = {
    period,
    first,
    last,
    timezone: summary.timezone,
    rangeText: shown.rangeText,
    steps: stepsOf(shown, person.goal),
    heart: heartOf(shown),
    sleep: sleepOf(shown, nights),
    weight: weightOf(shown),
  };
  return { ...overview, empty: !overview.steps && !overview.heart && !overview.sleep && !overview.weight };
}

interface Shown {
  days: SummaryDay[];
  labels: { x: ReturnType<typeof endsAndMiddle> };
  rangeText: string;
  dayHref: (date: string) => string;
}

function stepsOf({ days, labels, dayHref }: Shown, goal: number) {
  const steps = days.map((day) => day.steps ?? 0);
  if (steps.every((value) => value === 0)) return null;
  const met = (value: number) => goal > 0 && value >= goal;
  const chart: Chart = barChart(
    steps.map((value) => [{ kind: goal === 0 || met(value) ? 'met' : 'below', value }]),
    labels,
    { value: goal },
  );
  // Over the days with steps: a year's view of a person who began last month is not a year of rest.
  const walked = steps.filter((value) => value > 0);
  return {
    chart,
    goal,
    average: Math.round(walked.reduce((sum, value) => sum + value, 0) / walked.length),
    metDays: steps.filter(met).length,
    days: walked.length,
    links: days.map((day) => ({ href: dayHref(day.date), title: `${shortDate(day.date, true)}: ${amount(day.steps ?? 0)} steps` })),
    rows: days.map((day) => ({
      date: day.date,
      dateText: rowDate(day.date),
      href: dayHref(day.date),
      steps: amount(day.steps ?? 0),
      met: met(day.steps ?? 0),
      distance: fixed((day.distance ?? 0) / 1000, 2),
      calories: fixed(day.calories ?? 0, 1),
    })).reverse(),
  };
}

function heartOf({ days, labels }: Shown) {
  const resting = days.map((day) => day.resting_heart_rate ?? null);
  const known = resting.filter((value): value is number => value !== null);
  if (known.length === 0) return null;
  return {
    chart: lineChart(resting, labels, { kind: 'heart', minSpan: 10, bridge: 1, dotsUpTo: 31 }),
    lowest: amount(Math.min(...known), 1),
    highest: amount(Math.max(...known), 1),
    average: amount(known.reduce((sum, value) => sum + value, 0) / known.length, 1),
    rows: days.flatMap((day) => (day.resting_heart_rate == null ? [] : [{ date: day.date, dateText: rowDate(day.date), resting: fixed(day.resting_heart_rate, 1) }])).reverse(),
  };
}

function sleepOf({ days, labels }: Shown, nights: Map<string, Record<SleepStageName, number>>) {
  if (nights.size === 0) return null;
  const chart = barChart(
    days.map((day) => STAGES.map(({ stage }) => ({ kind: stage, value: (nights.get(day.date)?.[stage] ?? 0) / 60 }))),
    labels,
  );
  const asleep = days.filter((day) => nights.has(day.date)).map((day) => day.minutes_asleep ?? 0);
  return {
    chart,
    nights: nights.size,
    averageAsleep: duration(asleep.reduce((sum, minutes) => sum + minutes, 0) / asleep.length),
    rows: days
      .flatMap((day) => {
        const night = nights.get(day.date);
        if (!night) return [];
        return [{ date: day.date, dateText: rowDate(day.date), stages: STAGES.map(({ stage }) => hoursAndMinutes(night[stage])), asleep: hoursAndMinutes(day.minutes_asleep ?? 0), asleepMinutes: day.minutes_asleep ?? 0 }];
      })
      .reverse(),
  };
}

function weightOf({ days, labels }: Shown) {
  const weights = days.map((day) => day.weight ?? null);
  const measured = days.filter((day) => day.weight != null);
  if (measured.length === 0) return null;
  const firstDay = measured[0]!;
  const lastDay = measured[measured.length - 1]!;
  return {
    chart: lineChart(weights, labels, { kind: 'weight', minSpan: 2, bridge: days.length, dotsUpTo: 31 }),
    first: { kg: kilograms(firstDay.weight!), dateText: shortDate(firstDay.date, true) },
    last: { kg: kilograms(lastDay.weight!), dateText: shortDate(lastDay.date, true) },
    count: measured.length,
    rows: measured.map((day) => ({ date: day.date, dateText: rowDate(day.date), kg: kilograms(day.weight!) })).reverse(),
  };
}
