/**
 * `stride demo`: a developer, a demo user with 90 days of plausible data of every kind (steps,
 * distance from them, calories, heart rate, sleep in stages, weight), and a confidential demo app,
 * then the credentials and a ready-to-open authorization URL. Safe to run again: it reuses the
 * accounts and app, issues a fresh password and client secret, puts back the app settings its
 * printed request needs, and stores the days again. It first checks that the server it points at
 * answers, on the same database (demo-server.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { DEFAULT_GRANT_TYPES, MAX_REDIRECT_URIS, registerApp, rotateClientSecret, updateAppSettings, type AppSettings } from '../domain/apps.js';
import { minutesOfReadings } from '../domain/heart-rate-readings.js';
import { dataChange } from '../domain/local-dates.js';
import { writePersonData, type WrittenCounts } from '../domain/person-data.js';
import { OFFICE_WORKER, synthesizePerson } from '../domain/synthetic-person.js';
import { createAccount } from '../domain/users.js';
import { ALL_SCOPES, formatScopes } from '../domain/scopes.js';
import { checkServerAnswers, checkServerKnowsApp } from './demo-server.js';
import { hashPassword } from '../security/passwords.js';
import type { DataChange, SleepSessionInput } from '../store/sleep.js';
import type { App } from '../store/apps.js';
import type { Stores } from '../store/stores.js';
import type { User, UserStore } from '../store/users.js';

export const DEMO_DEVELOPER_EMAIL = 'developer@demo.stride.local';
export const DEMO_USER_EMAIL = 'walker@demo.stride.local';
export const DEMO_APP_NAME = 'Stride Demo App';
export const DEMO_DAYS = 90;

async function ensureUser(users: UserStore, clock: Clock, email: string, name: string, password: string): Promise<User> {
  const existing = await users.findByEmail(email);
  if (!existing) return createAccount(users, clock, { email, password, displayName: name });
  // A fresh password, as `stride users set-password` sets one: the demo user's sessions end with it.
  await users.changePassword(existing.id, await hashPassword(password), null, clock());
  return existing;
}

/**
 * The demo walker's sessions stored by an earlier run that the new `nights` do not replace (a run
 * on another day draws each date's night anew, and a night that overlaps a stored one would be
 * refused): removed, with their events, so that a second run never fails.
 */
async function removeEarlierNights(stores: Stores, userId: string, nights: readonly SleepSessionInput[], change: DataChange): Promise<void> {
  if (nights.length === 0) return;
  const starts = new Set(nights.map((night) => night.start_time));
  const from = Math.min(...starts);
  const to = Math.max(...nights.map((night) => night.end_time)) + 86_400 + 1;
  for (const stored of await stores.sleep.endingWithin(userId, from, to)) {
    if (!starts.has(stored.start_time)) await stores.sleep.remove(userId, stored.id, change);
  }
}

/** What the demo walker's days were made of, and how long storing them took. */
export interface DemoData {
  written: WrittenCounts;
  readings: number;
  milliseconds: number;
}

/**
 * The demo walker's last DEMO_DAYS days, lived as an office worker in Berlin (synthetic-person.ts),
 * stored through the stores as uploads of them would be, each with its event. Minutes merge into
 * what an earlier run stored; nights and weighings at the same times replace theirs.
 */
export async function storeDemoDays(stores: Stores, user: User, now: number, coalesceSeconds: number): Promise<DemoData> {
  const started = performance.now();
  const life = OFFICE_WORKER;
  if (user.timezone !== life.timezone) await stores.users.updateProfile(user.id, { timezone: life.timezone }, now);
  const person = synthesizePerson(life, now, DEMO_DAYS);
  await removeEarlierNights(stores, user.id, person.sleep, dataChange(life.timezone, now, coalesceSeconds));
  const records = { steps: person.steps, calories: person.calories, heartrate: minutesOfReadings(person.heartrate), sleep: person.sleep, weight: person.weight };
  const written = await writePersonData(stores, { id: user.id, timezone: life.timezone }, records, now, coalesceSeconds);
  return { written, readings: person.heartrate.length, milliseconds: Math.round(performance.now() - started) };
}

/**
 * What the reused demo app must change for the authorization URL and the `curl` that demo prints to
 * work: the callback of the server's current address (another PORT or PUBLIC_URL than last time)
 * registered first (kept or moved there); every scope; and no requirement of PAR or DPoP, which a walk-through
 * may have set (docs/oauth.md) and which a plain request and a proof-less exchange would fail.
 */
function settingsForPrintedRequest(app: App, redirectUri: string): Partial<AppSettings> {
  const changes: Partial<AppSettings> = {};
  // First, so that every page that builds a request for the app names the server's current address.
  if (app.redirectUris[0] !== redirectUri) changes.redirectUris = [redirectUri, ...app.redirectUris.filter((uri) => uri !== redirectUri)].slice(0, MAX_REDIRECT_URIS);
  if (formatScopes(app.scopes) !== formatScopes(ALL_SCOPES)) changes.scopes = [...ALL_SCOPES];
  if (!DEFAULT_GRANT_TYPES.every((grant) => app.grantTypes.includes(grant))) changes.grantTypes = [...new Set([...app.grantTypes, ...DEFAULT_GRANT_TYPES])];
  if (app.requirePar) changes.requirePar = false;
  if (app.requireDpop) changes.requireDpop = false;
  return changes;
}

export async function runDemo(stores: Stores, config: Config, clock: Clock) {
  await checkServerAnswers(config);
  const developerPassword = randomBytes(9).toString('base64url');
  const userPassword = randomBytes(9).toString('base64url');
  const developer = await ensureUser(stores.users, clock, DEMO_DEVELOPER_EMAIL, 'Demo Developer', developerPassword);
  const user = await ensureUser(stores.users, clock, DEMO_USER_EMAIL, 'Demo Walker', userPassword);

  const redirectUri = `${config.publicUrl}/demo/callback`;
  const existing = (await stores.apps.list(developer.id)).find((app) => app.name === DEMO_APP_NAME);
  let clientId: string;
  let clientSecret: string;
  if (existing) {
    clientId = existing.clientId;
    clientSecret = await rotateClientSecret(stores, clock, existing);
    const changes = settingsForPrintedRequest(existing, redirectUri);
    if (Object.keys(changes).length > 0) await updateAppSettings(stores.apps, clock, existing, changes);
  } else {
    const registered = await registerApp(stores.apps, clock, developer.id, {
      name: DEMO_APP_NAME,
      description: 'Created by `stride demo` to try the authorization flow.',
      redirectUris: [redirectUri],
      scopes: [...ALL_SCOPES],
      isPublic: false,
    });
    clientId = registered.app.clientId;
    clientSecret = registered.clientSecret!;
  }

  await checkServerKnowsApp(config, clientId, redirectUri);

  const data = await storeDemoDays(stores, user, clock(), config.webhooks.coalesceSeconds);
  const { written } = data;

  const state = randomBytes(12).toString('base64url');
  const authorizationUrl = new URL(`${config.authUrl}/oauth2/authorize`);
  authorizationUrl.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: ALL_SCOPES.join(' '),
    state,
  }).toString();

  const json = {
    user: {
      email: user.email,
      password: userPassword,
      days: DEMO_DAYS,
      timezone: OFFICE_WORKER.timezone,
      step_samples: written.steps ?? 0,
      calorie_minutes: written.calories ?? 0,
      heart_rate_minutes: written.heartrate ?? 0,
      heart_rate_readings: data.readings,
      sleep_sessions: written.sleep ?? 0,
      weight_measurements: written.weight ?? 0,
      stored_in_ms: data.milliseconds,
    },
    developer: { email: developer.email, password: developerPassword },
    app: { client_id: clientId, client_secret: clientSecret, redirect_uri: redirectUri, scopes: ALL_SCOPES },
    authorization_url: authorizationUrl.toString(),
  };
  const text = [
    'Stride demo is ready.',
    '',
    `Sign in as the demo user:    ${user.email} / ${userPassword}`,
    `  ${DEMO_DAYS} days of an office worker in ${OFFICE_WORKER.timezone}, stored in ${(data.milliseconds / 1000).toFixed(1)} s:`,
    `  ${written.steps ?? 0} minutes of steps (distance follows from them), ${written.calories ?? 0} minutes of calories,`,
    `  ${written.heartrate ?? 0} minutes of heart rate (${data.readings} readings), ${written.sleep ?? 0} nights of sleep in stages,`,
    `  ${written.weight ?? 0} morning weighings`,
    `Developer dashboard login:   ${developer.email} / ${developerPassword}`,
    '',
    `client_id:      ${clientId}`,
    `client_secret:  ${clientSecret}`,
    `redirect_uri:   ${redirectUri}`,
    '',
    'Open this URL in a browser while `npm start` runs, sign in and allow access:',
    authorizationUrl.toString(),
    '',
    'The browser lands on the redirect URI with ?code=…; exchange it:',
    `curl -s -X POST ${config.publicUrl}/oauth2/token -d grant_type=authorization_code \\`,
    `  -d client_id=${clientId} -d client_secret=${clientSecret} \\`,
    `  --data-urlencode redirect_uri=${redirectUri} -d code=PASTE_CODE`,
  ].join('\n');
  return { text, json };
}
