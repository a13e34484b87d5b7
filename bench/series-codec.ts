/**
 * The packed minutes of one day (src/db/codec/minute-values.ts): bytes per day and µs per pack and unpack,
 * of the runs alone (the form of decision 0013) and of the stored form (runs, deflated when that is
 * shorter), on the days of bench/series-size.ts: steps without pattern every minute, and steps and
 * calories (in tenths) of 16 waking hours.
 *
 *   npm run build && node dist/bench/series-codec.js
 */
import { deflateRawSync } from 'node:zlib';
import { emptyDay, packMinutes, packRuns, unpackMinutes, unpackRuns, type DayMinutes } from '../src/db/codec/minute-values.js';
import { wakingDay } from './series-size.js';

const DAYS = 200;
const FIRST_DAY = Date.UTC(2026, 9, 1) / 1000;

function dayOf(samples: Array<{ start_time: number; value: number }>, scale: number): DayMinutes {
  const day = emptyDay();
  for (const { start_time, value } of samples) day[((start_time - FIRST_DAY) % 86_400) / 60] = Math.round(value * scale);
  return day;
}

function noise(person: number): DayMinutes {
  return emptyDay().map((_, m) => {
    const x = Math.sin(person * 7919 + (FIRST_DAY + m * 60) / 60) * 10_000;
    const r = x - Math.floor(x);
    return r < 0.6 ? Math.floor(r * 20) : Math.floor(r * 140);
  });
}

/** Median µs per call of `work` over each day, in rounds. */
function timed<T>(items: readonly T[], work: (item: T) => unknown): number {
  const rounds: number[] = [];
  for (let round = 0; round < 15; round++) {
    const started = performance.now();
    for (const item of items) work(item);
    rounds.push(((performance.now() - started) * 1000) / items.length);
  }
  return rounds.sort((a, b) => a - b)[7]!;
}

const sets: Record<string, DayMinutes[]> = {
  'steps noise, 24 h': Array.from({ length: DAYS }, (_, i) => noise(i)),
  'steps, 16 waking hours': Array.from({ length: DAYS }, (_, i) => dayOf(wakingDay(i, FIRST_DAY).steps, 1)),
  'calories (tenths), 16 waking hours': Array.from({ length: DAYS }, (_, i) => dayOf(wakingDay(i, FIRST_DAY).calories, 10)),
};

console.log('| day | runs, bytes | runs deflated, bytes | stored, bytes | pack runs / stored, µs | unpack runs / stored, µs |');
console.log('|---|---|---|---|---|---|');
for (const [name, days] of Object.entries(sets)) {
  const runs = days.map(packRuns);
  const stored = days.map(packMinutes);
  const mean = (buffers: Uint8Array[]) => (buffers.reduce((sum, b) => sum + b.length, 0) / buffers.length).toFixed(0);
  const deflated = runs.map((r) => deflateRawSync(r));
  const packRunsUs = timed(days, packRuns);
  const packStoredUs = timed(days, packMinutes);
  const unpackRunsUs = timed(runs, unpackRuns);
  const unpackStoredUs = timed(stored, unpackMinutes);
  console.log(`| ${name} | ${mean(runs)} | ${mean(deflated)} | ${mean(stored)} | ${packRunsUs.toFixed(1)} / ${packStoredUs.toFixed(1)} | ${unpackRunsUs.toFixed(1)} / ${unpackStoredUs.toFixed(1)} |`);
}
