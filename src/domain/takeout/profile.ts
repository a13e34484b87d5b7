/**
 * The archive's `Profile.csv`: the Fitbit account's settings that say how the archive's values are
 * written — the time zone of its local times, and the unit of its weights. Only those two columns
 * are read; nothing of the Fitbit profile is copied into Stride's.
 */
import { canonicalTimeZone } from '../profile-time-zone.js';

export type WeightUnit = 'kg' | 'lb' | 'stone';

export interface ArchiveProfile {
  /** An IANA zone the runtime knows; null when the file names none (or one unknown here). */
  timezone: string | null;
  weightUnit: WeightUnit | null;
}

/** Fitbit's words for a weight unit (its profile's weightUnit, or a unit's name). */
const WEIGHT_UNITS: ReadonlyArray<[RegExp, WeightUnit]> = [
  [/^(en_us|us|pound|pounds|lb|lbs)$/i, 'lb'],
  [/^(en_gb|stone|stones|st)$/i, 'stone'],
  [/^(metric|kilogram|kilograms|kg|kgs)$/i, 'kg'],
];

export function weightUnitOf(text: string | undefined): WeightUnit | null {
  const value = (text ?? '').trim();
  for (const [pattern, unit] of WEIGHT_UNITS) if (pattern.test(value)) return unit;
  return null;
}

/** The profile's settings, from the file's text (a header line and one line of values). */
export function readProfile(text: string): ArchiveProfile {
  const [header, values] = csvRecords(text.replace(/^\uFEFF/, ''));
  if (!header || !values) return { timezone: null, weightUnit: null };
  const field = (name: string) => {
    const index = header.findIndex((column) => column.trim().toLowerCase() === name);
    return index < 0 ? undefined : values[index];
  };
  const zone = field('timezone')?.trim();
  return { timezone: zone ? canonicalTimeZone(zone) : null, weightUnit: weightUnitOf(field('weight_unit')) };
}

/** The first two records of CSV text (RFC 4180: quoted fields may hold commas, quotes and line breaks). */
function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length && records.length < 2; i++) {
    const character = text[i]!;
    if (quoted) {
      if (character === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (character === '"') {
        quoted = false;
      } else {
        field += character;
      }
    } else if (character === '"') {
      quoted = true;
    } else if (character === ',') {
      record.push(field);
      field = '';
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else {
      field += character;
    }
  }
  if (records.length < 2 && (field !== '' || record.length > 0)) records.push([...record, field]);
  return records;
}
