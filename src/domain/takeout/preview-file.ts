/**
 * One file's part of a Takeout archive's preview (preview.ts): its entries and the local dates they
 * name, without reading their values. A pure function, run by the file reader's worker thread
 * (file-reader.ts).
 */
import type { TakeoutKind } from '../../store/takeout-imports.js';
import { parseListDate } from './fitbit-times.js';
import type { WeightUnit } from './profile.js';

/** The local dates an entry of `kind` names (its day number), without reading its values; null when none. */
function dayOf(kind: TakeoutKind, row: unknown): number | null {
  if (typeof row !== 'object' || row === null) return null;
  const entry = row as Record<string, unknown>;
  switch (kind) {
    case 'sleep':
      return typeof entry.dateOfSleep === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(entry.dateOfSleep) ? Date.parse(`${entry.dateOfSleep}T00:00:00Z`) / 86_400_000 : null;
    case 'weight':
      return parseListDate(entry.date);
    case 'resting_heart_rate': {
      const value = entry.value as Record<string, unknown> | undefined;
      return parseListDate(value?.date) ?? parseListDate(entry.dateTime);
    }
    default:
      return parseListDate(entry.dateTime);
  }
}

/** The weight unit of weighings without a profile's word for it: weight over BMI is the height squared, in the unit's terms. */
function unitFromBmi(row: unknown): WeightUnit | null {
  const entry = row as Record<string, unknown> | null;
  const weight = Number(entry?.weight);
  const bmi = Number(entry?.bmi);
  if (!(weight > 0 && bmi > 0)) return null;
  const squaredHeight = weight / bmi;
  // Adults are 1.4–2.1 m tall: 2–4.4 m² in kg, 4.3–9.7 in lb, 0.3–0.7 in stones.
  return squaredHeight < 1 ? 'stone' : squaredHeight < 4.37 ? 'kg' : 'lb';
}

/** What the preview finds in one file: its entries and their local dates, or why it cannot be read. */
export type FileFound = { entries: number; days: number[]; bmiUnit: WeightUnit | null } | { unreadable: string };

/** One file's part of the preview (a pure function: the file reader's worker runs it). */
export function previewFile(kind: TakeoutKind, bytes: Uint8Array): FileFound {
  let list: unknown;
  try {
    list = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (error) {
    return { unreadable: `is not valid JSON (${(error as Error).message})` };
  }
  if (!Array.isArray(list)) return { unreadable: 'is not a JSON list of entries' };
  const days = new Set<number>();
  let bmiUnit: WeightUnit | null = null;
  for (const row of list) {
    const day = dayOf(kind, row);
    if (day !== null) days.add(day);
    if (kind === 'weight' && bmiUnit === null) bmiUnit = unitFromBmi(row);
  }
  return { entries: list.length, days: [...days], bmiUnit };
}
