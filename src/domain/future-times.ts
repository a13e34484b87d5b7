/**
 * How far ahead of the server's clock a time sent by a device may be: device clocks drift, and a
 * time more than a day ahead is a clock gone wrong (docs/api.md). The schemas' `notAfterClock`
 * keyword (http/validation.ts) and every hand check of an upload or an import use this bound and
 * these words.
 *
 * A rule of the domain that needs nothing else: .dependency-cruiser.cjs places this module in the
 * foundation layer, so that the schema keyword of http/ words it as the domain's checks do.
 */
export const MAX_AHEAD_SECONDS = 86_400;

/** The one wording of a time too far ahead: `body/time is more than a day ahead of the server's clock`. */
export function tooFarAheadWords(field: string, seconds = MAX_AHEAD_SECONDS): string {
  return `${field} is more than ${seconds === 86_400 ? 'a day' : `${seconds} seconds`} ahead of the server's clock`;
}

/** Why `time` cannot be stored — more than MAX_AHEAD_SECONDS after `now` — or null; `field` names it. */
export function tooFarAhead(field: string, time: number, now: number): string | null {
  return time > now + MAX_AHEAD_SECONDS ? tooFarAheadWords(field) : null;
}
