/**
 * IANA time zone names, as the profile stores them and the steps API accepts them (docs/api.md). A
 * name is accepted in any letter case and returned in its IANA spelling when the runtime lists it
 * (europe/berlin → Europe/Berlin); other names the runtime accepts, such as the links Asia/Kolkata
 * or Europe/Kiev, are kept exactly as given.
 */
import { IANAZone } from 'luxon';

/** IANA names are letters, digits and `_ + -` in `/`-separated parts (no bare offsets). */
const ZONE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;
const MAX_ZONE_NAME_LENGTH = 64;

let spellingByLowerCase: Map<string, string> | null = null;

/** Canonical spellings of the zones this runtime knows, keyed by their lower-case form. */
function knownSpellings(): Map<string, string> {
  if (spellingByLowerCase === null) {
    const names = [...Intl.supportedValuesOf('timeZone'), 'UTC'];
    spellingByLowerCase = new Map(names.map((name) => [name.toLowerCase(), name]));
  }
  return spellingByLowerCase;
}

/**
 * The IANA spelling of `name`, or null when it is not a time zone this server knows.
 * (`Intl` itself would rename Asia/Kolkata to Asia/Calcutta, so its resolved name is not used.)
 */
export function canonicalTimeZone(name: string): string | null {
  if (name.length > MAX_ZONE_NAME_LENGTH || !ZONE_NAME_PATTERN.test(name)) return null;
  // A name the runtime lists is valid; only others need Luxon's check, which builds an
  // Intl.DateTimeFormat per call (a fifth of the CPU of a steps GET, and native memory).
  const known = knownSpellings().get(name.toLowerCase());
  if (known !== undefined) return known;
  return IANAZone.isValidZone(name) ? name : null;
}
