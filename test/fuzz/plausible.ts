/** Values that are almost right for a field, so that fuzzed requests reach the checks behind the first. */
import fc from 'fast-check';
import { realValue } from './hostile.js';
import { PUBLIC_REDIRECT_URI, REDIRECT_URI } from './world.js';

const SCOPES = ['read_profile', 'write_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate', 'read_sleep', 'write_sleep', 'read_body', 'write_body'];

/** Scope lists: usually a subset of the real scopes, sometimes with unknown ones or odd separators. */
export const scopeList = fc.oneof(
  { weight: 3, arbitrary: fc.subarray(SCOPES, { minLength: 1 }).map((names) => names.join(' ')) },
  {
    weight: 1,
    arbitrary: fc
      .subarray([...SCOPES, 'openid', 'admin', 'READ_PROFILE'])
      .chain((names) => fc.constantFrom(' ', '  ', '+', ',', '\t').map((separator) => names.join(separator))),
  },
);

/** Redirect URIs: usually a registered one, sometimes a near miss (RFC 9700 §4.1: exact matching). */
export const redirectUri = fc.oneof(
  { weight: 3, arbitrary: fc.constant(REDIRECT_URI) },
  { weight: 1, arbitrary: fc.constant(PUBLIC_REDIRECT_URI) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      `${REDIRECT_URI}/`, `${REDIRECT_URI}?x=1`, `${REDIRECT_URI}#x`, REDIRECT_URI.toUpperCase(), 'https://client.example/callback/../callback',
      'https://client.example:443/callback', 'https://evil.example/callback', 'https://client.example.evil.example/callback',
      'http://client.example/callback', 'com.example.app:/cb', 'http://localhost/cb', 'javascript:alert(1)//', `${REDIRECT_URI}\u0000`, `${REDIRECT_URI} `,
    ),
  },
);

/** One of `right` most of the time, one of `wrong` otherwise. */
export function mostly(right: string[], wrong: string[]): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...right) }, { weight: 1, arbitrary: fc.constantFrom(...wrong) });
}

export const clientId = realValue(['clientId', 'publicClientId']);

export const base64url43 = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), minLength: 43, maxLength: 43 });

export const timeZone = fc.constantFrom(
  'UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Kiritimati', 'Etc/GMT+12', 'Etc/GMT-14',
  'utc', 'europe/berlin', 'EST', 'CET', '+01:00', 'Z', 'GMT', 'Mars/Olympus_Mons', 'Europe/Berlin\u0000', 'America/Argentina/ComodRivadavia',
  '../../../etc/localtime', 'Europe/../UTC',
);

/** Unix seconds near now, on and off minute boundaries, as text. */
export const unixSeconds = fc
  .tuple(fc.integer({ min: -4000 * 86_400, max: 3 * 86_400 }), fc.boolean())
  .map(([offset, aligned]) => {
    const t = Math.floor(Date.now() / 1000) + offset;
    return String(aligned ? t - (t % 60) : t);
  });

/** A new, unused email address (sign-up), or a near miss of one. */
export const newEmail = fc
  .tuple(fc.stringMatching(/^[a-z0-9._+-]{1,20}$/), fc.constantFrom('example.com', 'EXAMPLE.com', 'example', 'ex ample.com', 'xn--bcher-kva.example'))
  .map(([local, domain]) => `${local}@${domain}`);
