/**
 * Fitbit's OAuth scope words and the Stride scopes each one is granted as (docs/oauth.md, "Fitbit
 * clients"), so that an app written against the Fitbit Web API connects by changing only its base
 * URL and credentials.
 */
import type { Scope } from './scopes.js';

/**
 * Every scope word the Fitbit Web API lists. A word for data Stride does not hold maps to no scope:
 * it is granted as nothing, so that an app asking for it as well still connects.
 */
export const FITBIT_SCOPE_WORDS: Readonly<Record<string, readonly Scope[]>> = {
  activity: ['read_activity'],
  heartrate: ['read_heartrate'],
  sleep: ['read_sleep', 'write_sleep'],
  weight: ['read_body', 'write_body'],
  profile: ['read_profile'],
  blood_glucose: [],
  cardio_fitness: [],
  electrocardiogram: [],
  irregular_rhythm_notifications: [],
  location: [],
  nutrition: [],
  oxygen_saturation: [],
  respiratory_rate: [],
  settings: [],
  social: [],
  temperature: [],
};

export function isFitbitWord(value: string): boolean {
  return Object.hasOwn(FITBIT_SCOPE_WORDS, value);
}

/** The Stride scopes a Fitbit word is granted as; none for a word of data Stride does not hold. */
export function scopesOfWord(word: string): readonly Scope[] {
  return isFitbitWord(word) ? FITBIT_SCOPE_WORDS[word]! : [];
}
