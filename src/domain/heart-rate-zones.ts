/**
 * Heart-rate zones (docs/api.md, "Heart-rate zones and active minutes"): the maximum heart rate a
 * person's zones are counted from, each zone's bounds in whole beats per minute, and the zone of a
 * minute by its average.
 *
 * A minute's average is a whole number of beats, so each share of the maximum becomes the first
 * whole beat at or above it: fat burn from ceil(50 % × max), cardio from ceil(70 % × max), peak from
 * ceil(85 % × max), each zone ending one beat below the next. A minute is in fat burn exactly when
 * its average is at least half the maximum, and so on, with no beat in two zones or in none.
 */
import { MIN_BPM } from '../store/series-writer.js';

/** The zones, lowest first: their index is a minute's zone. */
export const ZONE_NAMES = ['out_of_range', 'fat_burn', 'cardio', 'peak'] as const;
export type ZoneName = (typeof ZONE_NAMES)[number];

export const OUT_OF_RANGE = 0;
export const FAT_BURN = 1;
export const CARDIO = 2;
export const PEAK = 3;

/** Where each zone above out of range starts, in percent of the maximum heart rate. */
const ZONE_START_PERCENT = [50, 70, 85] as const;

/** Active zone minutes a minute of each zone earns: one in fat burn, two in cardio and peak. */
export const ACTIVE_ZONE_MINUTE_WEIGHTS: Readonly<Record<ZoneName, number>> = { out_of_range: 0, fat_burn: 1, cardio: 2, peak: 2 };

/** The profile fields the maximum heart rate comes from. */
export interface HeartRateProfile {
  birth_year: number | null;
  max_heart_rate: number | null;
}

/** A zone's beats per minute, both inclusive. */
export interface ZoneBounds {
  min: number;
  max: number;
}

/** The zones counted from one maximum heart rate. */
export interface HeartRateZones {
  maxHeartRate: number;
  /** Per zone, lowest first (ZONE_NAMES). */
  bounds: readonly ZoneBounds[];
  /** The first beat of fat burn, cardio and peak: a minute's zone is how many of them it reaches. */
  starts: readonly [number, number, number];
  /** The zone of each average a minute may hold, by its beats (index 0 to 255): zoneOf looks it up. */
  zoneByBpm: Uint8Array;
}

/** The age counted on a date of `year` (a date before the year of birth counts as age 0). */
function ageIn(year: number, birthYear: number): number {
  return Math.max(0, year - birthYear);
}

/**
 * The maximum heart rate on a local date of `year`: the profile's own, else 220 − age from its year
 * of birth, else null (zones are not counted).
 */
export function maxHeartRateOn(profile: HeartRateProfile, year: number): number | null {
  if (profile.max_heart_rate !== null) return profile.max_heart_rate;
  if (profile.birth_year !== null) return 220 - ageIn(year, profile.birth_year);
  return null;
}

/**
 * The zones of a maximum heart rate (a whole number of beats). Out of range starts at the lowest
 * reading Stride keeps; peak ends at the maximum itself, though a minute above it is peak too.
 */
export function zonesOf(maxHeartRate: number): HeartRateZones {
  // Percent × max is a whole number of hundredths: dividing it once rounds no boundary away.
  const starts = ZONE_START_PERCENT.map((percent) => Math.ceil((percent * maxHeartRate) / 100)) as [number, number, number];
  const [fatBurn, cardio, peak] = starts;
  const zoneByBpm = new Uint8Array(256);
  for (let bpm = 0; bpm < zoneByBpm.length; bpm++) zoneByBpm[bpm] = starts.filter((start) => bpm >= start).length;
  return {
    maxHeartRate,
    starts,
    zoneByBpm,
    bounds: [
      { min: MIN_BPM, max: fatBurn - 1 },
      { min: fatBurn, max: cardio - 1 },
      { min: cardio, max: peak - 1 },
      { min: peak, max: maxHeartRate },
    ],
  };
}

/** The zone (an index of ZONE_NAMES) of a minute whose average is `bpm` (a whole number of beats). */
export function zoneOf(zones: HeartRateZones, bpm: number): number {
  // Called for every minute of a range: one look-up rather than three comparisons.
  return zones.zoneByBpm[bpm]!;
}
