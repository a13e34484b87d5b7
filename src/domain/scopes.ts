/**
 * The scopes an app may ask for (RFC 6749 §3.3, docs/api.md), with the plain words the consent page
 * shows for each.
 */

export const SCOPES = {
  read_profile: 'See your profile: name, time zone, daily step goal, stride length, year of birth and maximum heart rate',
  write_profile: 'Change your profile',
  read_activity: 'See your steps, distance and calories',
  write_activity: 'Add and change your steps, distance and calories',
  read_heartrate: 'See your heart rate',
  write_heartrate: 'Add and change your heart rate',
  read_sleep: 'See your sleep',
  write_sleep: 'Add and change your sleep',
  read_body: 'See your weight and body fat',
  write_body: 'Add and change your weight and body fat',
} as const;

export type Scope = keyof typeof SCOPES;

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/** Splits a space-delimited scope string (RFC 6749 §3.3); empty parts are ignored. */
export function parseScopeString(value: string): string[] {
  return value.split(' ').filter((part) => part !== '');
}

/** The canonical stored form: unique, in the order of SCOPES, space-separated. */
export function formatScopes(scopes: Iterable<string>): string {
  const set = new Set(scopes);
  return ALL_SCOPES.filter((scope) => set.has(scope)).join(' ');
}

/** Names the first unknown scope, or returns null when all are known. */
export function firstUnknownScope(scopes: Iterable<string>): string | null {
  for (const scope of scopes) if (!isScope(scope)) return scope;
  return null;
}
