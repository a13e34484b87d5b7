/**
 * `stride demo`: a developer, a demo user with 90 days of plausible steps, and a confidential demo
 * app, then the credentials and a ready-to-open authorization URL. Safe to run again: it reuses
 * the accounts and app, and issues a fresh password and client secret.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { registerApp, rotateClientSecret } from '../domain/apps.js';
import { stepsChange, type StepSample } from '../domain/step-samples.js';
import { createAccount } from '../domain/users.js';
import { ALL_SCOPES } from '../domain/scopes.js';
import { hashPassword } from '../security/passwords.js';
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

/** Minute samples for `days` days before `now`: quiet nights, a morning walk, busy afternoons. */
export function syntheticSteps(now: number, days: number, random: () => number = Math.random): StepSample[] {
  const samples: StepSample[] = [];
  const end = now - (now % 60);
  const firstDay = end - (end % 86400) - (days - 1) * 86400;
  for (let day = firstDay; day < end; day += 86400) {
    const energy = 0.6 + random() * 0.8;
    for (let minute = 0; minute < 1440; minute++) {
      const t = day + minute * 60;
      if (t >= end) break;
      const hour = minute / 60;
      let activity = 0;
      if (hour >= 7 && hour < 8) activity = 0.5; // morning walk
      else if (hour >= 8 && hour < 22) activity = 0.12;
      if (hour >= 17.5 && hour < 18.25) activity = 0.7; // evening run or walk
      if (random() < activity * energy) {
        samples.push({ start_time: t, value: Math.min(1000, Math.round(40 + random() * 80 * (1 + activity))) });
      }
    }
  }
  return samples;
}

export async function runDemo(stores: Stores, config: Config, clock: Clock) {
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
    clientSecret = await rotateClientSecret(stores.apps, clock, existing);
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

  const samples = syntheticSteps(clock(), DEMO_DAYS);
  await stores.steps.upsertSamples(user.id, samples, stepsChange(samples, user.timezone, clock(), config.webhooks.coalesceSeconds));

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
    user: { email: user.email, password: userPassword, step_samples: samples.length, days: DEMO_DAYS },
    developer: { email: developer.email, password: developerPassword },
    app: { client_id: clientId, client_secret: clientSecret, redirect_uri: redirectUri, scopes: ALL_SCOPES },
    authorization_url: authorizationUrl.toString(),
  };
  const text = [
    'Stride demo is ready.',
    '',
    `Sign in as the demo user:    ${user.email} / ${userPassword}`,
    `  (${samples.length} minute samples over the last ${DEMO_DAYS} days)`,
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
