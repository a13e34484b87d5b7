/**
 * One day of a person's data (docs/web.md, "Your data"): the day's figures from the daily summary,
 * its steps per minute from the steps series reader and its heart rate per minute from the heart
 * rate store's buckets — the reads behind `GET /v1/users/me/activities/steps` and
 * `/v1/users/me/heartrate/` with granularity=minute over the local day — as two charts, with every
 * minute that holds data in a table.
 */
import { DateTime } from 'luxon';
import type { DailySummaryReader } from '../../domain/daily-summary-reader.js';
import { parseDateRange } from '../../domain/local-dates.js';
import { ApiError } from '../../errors.js';
import { keptPlans } from '../../domain/kept-plans.js';
import type { StepSeriesReader } from '../../domain/step-series.js';
import { heartRateBuckets, type HeartRateDayReader } from '../../store/heart-rate-series.js';
import type { SleepStore } from '../../store/sleep.js';
import { barChart, lineChart, type XLabel } from './data-charts.js';
import { SHOWN_SUMMARY_FIELDS, STAGES, type DataPerson } from './data-overview.js';
import { amount, clockTime, duration, kilograms, longDate } from './data-words.js';

/** What the day reads through. */
export interface DayReads {
  summary: DailySummaryReader;
  steps: StepSeriesReader;
  heartRateDays: HeartRateDayReader;
  sleep: SleepStore;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Minute plans of local days, kept as the API keeps its own (decision 0005). */
const planOf = keptPlans();

/**
 * The local date a path names, if it is a date of the calendar no later than the person's today;
 * null otherwise (the page answers 404).
 */
export function dayOf(text: string, zone: string, now: number): { date: string; from: number; to: number; timezone: string } | null {
  if (!DATE.test(text)) return null;
  let range;
  try {
    range = parseDateRange({ start_date: text, end_date: text }, zone, now, { defaultDays: 1, maxDays: 1 });
  } catch (error) {
    if (error instanceof ApiError) return null;
    throw error;
  }
  const today = DateTime.fromSeconds(now, { zone: range.timezone }).toISODate()!;
  return text > today ? null : { date: text, ...range };
}

/** Marks under the x axis every six hours of the local clock (a day with a clock change has 23 or 25). */
function hourLabels(starts: readonly number[], end: number, zone: string): { x: XLabel[]; ticks: string[] } {
  const at = (index: number) => `${Math.round((index / starts.length) * 10_000) / 100}%`;
  const x: XLabel[] = [];
  starts.forEach((start, index) => {
    const time = clockTime(start, zone);
    if (['00:00', '06:00', '12:00', '18:00'].includes(time)) x.push({ x: at(index), label: time, anchor: index === 0 ? 'start' : 'middle' });
  });
  x.push({ x: '100%', label: clockTime(end, zone) === '00:00' ? '24:00' : clockTime(end, zone), anchor: 'end' });
  return { x, ticks: x.map((label) => label.x) };
}

export async function readDay(reads: DayReads, person: DataPerson, day: NonNullable<ReturnType<typeof dayOf>>, now: number) {
  const request = { granularity: 'minute' as const, timezone: day.timezone, start: day.from, end: day.to };
  const [summary, steps, heart, sessions] = await Promise.all([
    reads.summary(person, { start_date: day.date, end_date: day.date }, SHOWN_SUMMARY_FIELDS, now),
    // No write position: with a replica, the minutes may trail an upload of a moment ago.
    reads.steps(person.userId, request),
    heartRateBuckets(reads.heartRateDays, person.userId, planOf(request)),
    reads.sleep.endingWithin(person.userId, day.from, day.to),
  ]);
  const figures = summary.days[0]!;
  const minutes = steps.steps;
  const starts = minutes.map((minute) => minute.start_time);
  const labels = hourLabels(starts, day.to, day.timezone);
  // A minute's avg as the heart rate series shows it: the mean of its minutes, one decimal.
  const avgOf = (i: number) => (heart.minutes[i] === 0 ? null : Math.round((heart.sums[i]! / heart.minutes[i]!) * 10) / 10);
  const avgs = minutes.map((_, i) => avgOf(i));
  const rows = minutes.flatMap((minute, i) => {
    const avg = avgs[i]!;
    if (minute.value === 0 && avg === null) return [];
    return [{ start: minute.start_time, time: clockTime(minute.start_time, day.timezone), steps: minute.value, avg, min: avg === null ? null : heart.min[i]!, max: avg === null ? null : heart.max[i]! }];
  });
  const stageMinutes = STAGES.map(({ stage, word }) => ({
    word,
    minutes: sessions.reduce((sum, session) => sum + session.stages.filter((s) => s.stage === stage).reduce((total, s) => total + (s.end_time - s.start_time) / 60, 0), 0),
  }));
  const beats = avgs.filter((avg): avg is number => avg !== null);
  return {
    date: day.date,
    dateText: longDate(day.date),
    timezone: day.timezone,
    previous: DateTime.fromISO(day.date, { zone: 'UTC' }).minus({ days: 1 }).toISODate()!,
    next: DateTime.fromISO(day.date, { zone: 'UTC' }).plus({ days: 1 }).toISODate()!,
    isToday: DateTime.fromSeconds(now, { zone: day.timezone }).toISODate() === day.date,
    figures: {
      steps: amount(figures.steps ?? 0),
      goal: person.goal > 0 ? amount(person.goal) : null,
      met: person.goal > 0 && (figures.steps ?? 0) >= person.goal,
      distance: amount((figures.distance ?? 0) / 1000, 2),
      calories: amount(figures.calories ?? 0, 1),
      resting: figures.resting_heart_rate == null ? null : amount(figures.resting_heart_rate, 1),
      asleep: sessions.length === 0 ? null : duration(figures.minutes_asleep ?? 0),
      stages: stageMinutes.map(({ word, minutes }) => `${word} ${duration(minutes)}`).join(', '),
      weight: figures.weight == null ? null : kilograms(figures.weight),
    },
    stepsChart: steps.total === 0 ? null : barChart(minutes.map((minute) => [{ kind: 'steps', value: minute.value }]), labels),
    heartChart: beats.length === 0 ? null : lineChart(avgs, labels, { kind: 'heart', minSpan: 20, bridge: 10, dotsUpTo: 0 }),
    heartRange: beats.length === 0 ? null : { lowest: Math.min(...rows.flatMap((row) => (row.min === null ? [] : [row.min]))), highest: Math.max(...rows.flatMap((row) => (row.max === null ? [] : [row.max]))) },
    rows,
    empty: steps.total === 0 && beats.length === 0 && sessions.length === 0 && figures.weight == null,
  };
}
