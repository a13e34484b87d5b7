/**
 * Bytes and microseconds of a packed heart-rate day (db/codec/heart-rate-minutes.ts): days of 16 waking hours
 * (960 minutes) of plausible readings, every 5 seconds, every second and once a minute, packed and
 * unpacked; with deflate (as stored when it pays) and without.
 *
 *   npm run build && node dist/bench/heart-rate-codec.js
 */
import { deflateRawSync } from 'node:zlib';
import { minuteVarints, packHeartRateMinutes, unpackHeartRateMinutes } from '../src/db/codec/heart-rate-minutes.js';
import { packHeartRateDay, summarize, packSummary, unpackSummary } from '../src/db/codec/heart-rate-summary.js';
import { lowestHalfHour } from '../src/domain/resting-heart-rate.js';
import { dayOf, wakingDayReadings } from './lib/heart-rate-data.js';

function timeUs(runs: number, work: () => void): number {
  for (let i = 0; i < 200; i++) work();
  const started = performance.now();
  for (let i = 0; i < runs; i++) work();
  return ((performance.now() - started) * 1000) / runs;
}

async function main(): Promise<void> {
  const dayStart = Date.UTC(2026, 10, 26) / 1000;
  const rows: string[] = ['| readings | minutes raw | minutes deflated | stored minutes | hours | pack µs | unpack minutes µs | unpack hours µs |', '|---|---|---|---|---|---|---|---|'];
  for (const [label, every] of [['every 5 s', 5], ['every second', 1], ['once a minute', 60]] as const) {
    const sizes = { raw: 0, deflated: 0, stored: 0, hours: 0 };
    const days = Array.from({ length: 20 }, (_, seed) => dayOf(wakingDayReadings(dayStart, every, seed + 1), dayStart));
    for (const day of days) {
      const stored = packHeartRateMinutes(day);
      const raw = minuteVarints(day);
      sizes.raw += raw.length;
      sizes.deflated += deflateRawSync(raw).length + 1;
      sizes.stored += stored.length;
      sizes.hours += packSummary(summarize(day)).length;
    }
    const day = days[0]!;
    const packed = packHeartRateDay(day, lowestHalfHour);
    const pack = timeUs(2000, () => packHeartRateDay(day, lowestHalfHour));
    const unpack = timeUs(5000, () => unpackHeartRateMinutes(packed.minutes));
    const hours = timeUs(20000, () => unpackSummary(packed.hours));
    const n = days.length;
    rows.push(`| ${label} | ${(sizes.raw / n).toFixed(0)} | ${(sizes.deflated / n).toFixed(0)} | ${(sizes.stored / n).toFixed(0)} | ${(sizes.hours / n).toFixed(0)} | ${pack.toFixed(1)} | ${unpack.toFixed(1)} | ${hours.toFixed(2)} |`);
  }
  console.log(rows.join('\n'));
}

await main();
