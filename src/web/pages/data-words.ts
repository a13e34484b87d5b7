/** How the "Your data" pages write dates, times and amounts: in English, for a person to read. */

const DAY_MONTH = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
const DAY_MONTH_YEAR = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const WEEKDAY_DATE = new Intl.DateTimeFormat('en-GB', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });

/** A local date (YYYY-MM-DD) at noon UTC: formatted in UTC, it is that date whatever the server's zone. */
const noonOf = (date: string) => new Date(`${date}T12:00:00Z`);

/** "3 Mar", or "3 Mar 2025". */
export function shortDate(date: string, withYear = false): string {
  return (withYear ? DAY_MONTH_YEAR : DAY_MONTH).format(noonOf(date));
}

/** "Monday 3 March 2025". */
export function longDate(date: string): string {
  return WEEKDAY_DATE.format(noonOf(date));
}

/** "3 Mar to 1 Apr 2025": a range of local dates. */
export function dateRange(first: string, last: string): string {
  const sameYear = first.slice(0, 4) === last.slice(0, 4);
  return `${shortDate(first, !sameYear)} to ${shortDate(last, true)}`;
}

/** 12,345; 72.5 — at most `decimals` decimals, with thousands separated. */
export function amount(value: number, decimals = 0): string {
  return value.toLocaleString('en', { maximumFractionDigits: decimals });
}

/** 12,345.0; 9.80 — always `decimals` decimals, so that a table's column lines up. */
export function fixed(value: number, decimals: number): string {
  return value.toLocaleString('en', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** "7 h 05 min", "45 min". */
export function duration(minutes: number): string {
  const hours = Math.floor(minutes / 60);
  const rest = Math.round(minutes - hours * 60);
  return hours === 0 ? `${rest} min` : `${hours} h ${String(rest).padStart(2, '0')} min`;
}

/** "7:05": hours and minutes, as a table's column of durations says it in little room. */
export function hoursAndMinutes(minutes: number): string {
  const whole = Math.round(minutes);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/** 74.60: a weight in kilograms, always with its two decimals (hundredths are stored). */
export function kilograms(value: number): string {
  return fixed(value, 2);
}

/** "14:05": a local time of day in `zone`. */
export function clockTime(seconds: number, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: zone }).format(new Date(seconds * 1000));
}
