/** The commands of `stride` (README, "Command line"). Each returns what to print, as text and as JSON. */
import { readFile } from 'node:fs/promises';
import { systemClock } from '../clock.js';
import { createInitialAccessToken } from '../oauth/registration.js';
import type { Config } from '../config.js';
import { backupDatabase, BackupError, restoreDatabase } from '../db/backup.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import * as appsDomain from '../domain/apps.js';
import { DATA_KINDS, perSumKind, firstStoredOverlap, SleepOverlapError, writePersonData, type DataKind, type WrittenCounts } from '../domain/person-data.js';
import { addTestPeople, LIFE_NAMES } from '../domain/test-people.js';
import { isLifeName } from '../domain/synthetic-person.js';
import { createAccount, deleteAccount, setPassword } from '../domain/users.js';
import { createResetLink } from '../domain/password-resets.js';
import { parseScopeString } from '../domain/scopes.js';
import type { App } from '../store/apps.js';
import type { TestPerson } from '../store/test-people.js';
import type { User } from '../store/users.js';
import { createStores, type Stores } from '../store/stores.js';
import { addEndpoint, EndpointInputError, publicEndpoint, SECRET_OVERLAP_SECONDS, updateEndpoint } from '../webhooks/endpoints.js';
import { publicSubscriber, setSubscriber, SubscriberInputError } from '../webhooks/fitbit-subscriber.js';
import { targetProblem } from '../webhooks/targets.js';
import { runDemo } from './demo.js';
import { DemoServerProblem } from './demo-server.js';
import { ImportFileError, isDataKind, parseExportFile, parseKindFile, type ImportedFile } from './import.js';
import { importTakeout, reportText, TakeoutCommandError } from './takeout.js';

export type CommandResult = { text: string; json: unknown } | undefined;

export interface CommandInput {
  config: Config;
  values: Record<string, string | boolean | string[] | undefined>;
  args: string[];
  /** All of standard input, read when a command asks for it. */
  readStdin(): Promise<string>;
  /** A line of progress on standard error (a long import). */
  progress(line: string): void;
}

type Command = (input: CommandInput) => Promise<CommandResult>;

export class CommandError extends Error {}

/** `--password P`, or with `--password-stdin` the first line of standard input (kept out of `ps` and shell history). */
async function passwordOf({ values, readStdin }: CommandInput): Promise<string> {
  if (!values['password-stdin']) return required(values, 'password');
  if (values.password !== undefined) throw new CommandError('give --password or --password-stdin, not both');
  const line = (await readStdin()).split(/\r?\n/)[0] ?? '';
  if (line === '') throw new CommandError('--password-stdin read no password from standard input');
  return line;
}

function required(values: CommandInput['values'], name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new CommandError(`--${name} is required`);
  return value;
}

function onePositional(args: string[], what: string): string {
  if (args.length !== 1) throw new CommandError(`expected exactly one ${what}`);
  return args[0]!;
}

/** `--grant-types a,b` or `--grant-types "a b"`; `device_code` stands for RFC 8628's URN. */
function grantTypeList(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .filter((name) => name !== '')
    .map((name) => (name === 'device_code' ? appsDomain.DEVICE_CODE_GRANT_TYPE : name));
}

/** `--scopes a,b` or `--scopes "a b"`. */
function scopeList(value: string): string[] {
  return parseScopeString(value.replaceAll(',', ' '));
}

/** Opens the database, brings its schema up to date, runs, closes. */
async function withStores<T>(config: Config, run: (stores: Stores) => Promise<T>): Promise<T> {
  const db = openDatabase(config.databaseUrl, { transactionPooling: config.databaseTransactionPooling });
  try {
    await migrateToLatest(db);
    return await run(createStores(db));
  } finally {
    await db.close();
  }
}

/** The user an option names by email, or the command's one-line failure. */
async function userByEmail(stores: Stores, email: string): Promise<User> {
  const user = await stores.users.findByEmail(email.trim());
  if (!user) throw new CommandError(`no user with email ${email.trim().toLowerCase()}`);
  return user;
}

/** A rejection handler that turns an error of class `kind` into the command's one-line failure. */
function failWith(kind: new (...args: never[]) => Error) {
  return (error: unknown): never => {
    throw error instanceof kind ? new CommandError(error.message) : error;
  };
}

async function appOrFail(stores: Stores, clientId: string): Promise<App> {
  const app = await stores.apps.findByClientId(clientId);
  if (!app) throw new CommandError(`no app with client id ${clientId}`);
  return app;
}

export function describeApp(app: App, ownerEmail?: string) {
  return {
    client_id: app.clientId,
    name: app.name,
    owner: ownerEmail,
    type: app.isPublic ? 'public' : 'confidential',
    require_dpop: app.requireDpop,
    require_par: app.requirePar,
    redirect_uris: app.redirectUris,
    scopes: app.scopes,
    grant_types: app.grantTypes,
    created_at: app.createdAt,
  };
}

/** `--require-par yes|no` (RFC 9126 §6); undefined when not given. */
function requireParOption(values: CommandInput['values']): boolean | undefined {
  const given = values['require-par'];
  if (given === undefined) return undefined;
  if (given !== 'yes' && given !== 'no') throw new CommandError('--require-par must be yes or no');
  return given === 'yes';
}

/**
 * `--kind` (or `--metric`, as docs/operations.md also spells it) of `stride import`; undefined: the
 * file is an export.
 */
function kindOption(values: CommandInput['values']): DataKind | undefined {
  const given = values.kind ?? values.metric;
  if (given === undefined) return undefined;
  if (typeof given !== 'string' || !isDataKind(given)) throw new CommandError(`--kind must be one of ${DATA_KINDS.join(', ')}`);
  return given;
}

/**
 * Reads, checks and imports a file for the person `--user` names (docs/operations.md, "Importing
 * data"): all of it, or nothing when a record is bad or a sleep session overlaps a stored one.
 */
async function importFile({ config, values, args }: CommandInput, kind: DataKind | undefined) {
  const email = required(values, 'user');
  const file = onePositional(args, 'FILE');
  const text = await readFile(file, 'utf8');
  const now = systemClock();
  let parsed: ImportedFile;
  try {
    parsed = kind === undefined ? parseExportFile(text, now) : parseKindFile(kind, text, now);
  } catch (error) {
    if (error instanceof ImportFileError) throw new CommandError(`${file}: ${error.message}; nothing was imported`);
    throw error;
  }
  return withStores(config, async (stores) => {
    const user = await userByEmail(stores, email);
    const overlap = await firstStoredOverlap(stores, user.id, parsed.records.sleep ?? []);
    if (overlap) {
      const { id, start_time, end_time } = overlap.stored;
      throw new CommandError(`${file}: ${parsed.sleepNames[overlap.index]} overlaps the stored session ${id} (start_time ${start_time}, end_time ${end_time}); nothing was imported`);
    }
    const written = await writePersonData(stores, user, parsed.records, now, config.webhooks.coalesceSeconds).catch((error: unknown) => {
      // Only a session stored by someone else since the check above; the kinds before it are in.
      if (error instanceof SleepOverlapError) throw new CommandError(`${file}: ${error.message}; the records before it were imported`);
      throw error;
    });
    return { user: user.email, written, readings: parsed.readings };
  });
}

/** `stride import --takeout FILE --user EMAIL` (cli/takeout.ts). */
async function takeoutCommand({ config, values, args, progress }: CommandInput): Promise<CommandResult> {
  const email = required(values, 'user');
  const file = required(values, 'takeout');
  if (args.length > 0) throw new CommandError('--takeout names the archive; give no other FILE');
  if (values.kind !== undefined || values.metric !== undefined) throw new CommandError('--takeout reads every kind the archive holds; leave out --kind');
  const view = await withStores(config, async (stores) => {
    const user = await userByEmail(stores, email);
    return importTakeout(stores, config, user, file, systemClock, progress).catch(failWith(TakeoutCommandError));
  });
  if (view.state === 'failed') throw new CommandError(`${file}: the import ${view.id} failed: ${view.error}; what it imported before stays`);
  return { text: reportText(view), json: view };
}

const KIND_WORDS: Record<DataKind, [string, string]> = {
  ...perSumKind((metric): [string, string] => [`minute of ${metric}`, `minutes of ${metric}`]),
  heartrate: ['minute of heart rate', 'minutes of heart rate'],
  sleep: ['sleep session', 'sleep sessions'],
  weight: ['weight measurement', 'weight measurements'],
};

/** "3 minutes of steps, 2 sleep sessions", in the order of DATA_KINDS. */
function describeWritten(written: WrittenCounts, readings?: number): string {
  return DATA_KINDS.filter((kind) => written[kind] !== undefined)
    .map((kind) => {
      const count = written[kind]!;
      const words = `${count} ${KIND_WORDS[kind][count === 1 ? 0 : 1]}`;
      return kind === 'heartrate' && readings !== undefined ? `${words} (from ${readings} readings)` : words;
    })
    .join(', ');
}

/** A test person as `stride sandbox add` and `list` print them (docs/operations.md). */
function describeTestPerson(person: TestPerson) {
  return {
    id: person.id,
    email: person.email,
    display_name: person.displayName,
    life: person.life,
    timezone: person.timezone,
    synced_until: new Date(person.syncedUntil * 1000).toISOString(),
  };
}

function testPeopleLines(people: TestPerson[]): string {
  const emailWidth = Math.max(0, ...people.map((person) => person.email.length));
  return people
    .map((person) => `${person.email.padEnd(emailWidth)}  ${person.timezone.padEnd(17)} ${isLifeName(person.life) ? LIFE_NAMES[person.life].title : person.life}  (id ${person.id})`)
    .join('\n');
}

/** The developer `--owner` names: an account of its own, not a test person. */
async function developerByEmail(stores: Stores, email: string): Promise<User> {
  const owner = await userByEmail(stores, email);
  if (owner.test_person_owner_id !== null) throw new CommandError(`${owner.email} is a test person; give the email of the developer who owns them`);
  return owner;
}

export const COMMANDS: Record<string, Command> = {
  async serve({ config }) {
    // Loaded here: the server (Fastify, every route) is most of the command line's start-up, and
    // the other commands never use it.
    const { serve } = await import('../server.js');
    await serve(config);
    return undefined;
  },

  async migrate({ config }) {
    const db = openDatabase(config.databaseUrl, { transactionPooling: config.databaseTransactionPooling });
    const applied = await migrateToLatest(db).finally(() => db.close());
    return {
      text: applied.length ? `applied ${applied.join(', ')}` : 'the schema is up to date',
      json: { applied },
    };
  },

  async 'users create'(input) {
    const { config, values } = input;
    const email = required(values, 'email');
    const password = await passwordOf(input);
    const name = typeof values.name === 'string' ? values.name : undefined;
    const user = await withStores(config, (stores) =>
      createAccount(stores.users, systemClock, { email, password, ...(name !== undefined && { displayName: name }) }),
    );
    return {
      text: `created user ${user.email} (id ${user.id})`,
      json: { id: user.id, email: user.email, display_name: user.display_name },
    };
  },

  async 'users set-password'(input) {
    const { config, values } = input;
    const email = required(values, 'email');
    const password = await passwordOf(input);
    const user = await withStores(config, async (stores) => {
      const user = await userByEmail(stores, email);
      await setPassword(stores.users, systemClock, user, password);
      return user;
    });
    return {
      text: `set a new password for ${user.email}; every session of theirs has ended`,
      json: { id: user.id, email: user.email },
    };
  },

  async 'users reset-link'({ config, values }) {
    const email = required(values, 'email');
    const { user, link } = await withStores(config, async (stores) => {
      const user = await userByEmail(stores, email);
      return { user, link: await createResetLink(stores.passwordResets, systemClock, config.publicUrl, user) };
    });
    const expires = new Date(link.expiresAt * 1000).toISOString();
    return {
      text: `a link for ${user.email} to set a new password, usable once until ${expires} (using it ends every session of theirs):\n${link.url}`,
      json: { id: user.id, email: user.email, url: link.url, expires_at: link.expiresAt },
    };
  },

  async 'users delete'({ config, values }) {
    const email = required(values, 'email');
    const user = await withStores(config, async (stores) => {
      const user = await userByEmail(stores, email);
      await deleteAccount(stores.users, systemClock, user);
      return user;
    });
    return {
      text: `deleted ${user.email} with their profile, data of every kind, sessions and grants`,
      json: { id: user.id, email: user.email, deleted: true },
    };
  },

  async 'apps create'({ config, values }) {
    const ownerEmail = required(values, 'owner');
    const name = required(values, 'name');
    const redirectUris = (values['redirect-uri'] as string[] | undefined) ?? [];
    if (redirectUris.length === 0) throw new CommandError('--redirect-uri is required');
    const scopes = scopeList(required(values, 'scopes'));
    return withStores(config, async (stores) => {
      const owner = await userByEmail(stores, ownerEmail);
      const { app, clientSecret } = await appsDomain.registerApp(stores.apps, systemClock, owner.id, {
        name,
        redirectUris,
        scopes,
        isPublic: values.public === true,
        ...(typeof values['grant-types'] === 'string' && { grantTypes: grantTypeList(values['grant-types']) }),
        requireDpop: values['require-dpop'] === true,
        requirePar: requireParOption(values) ?? false,
      });
      const lines = [`created app "${app.name}"`, `client_id:     ${app.clientId}`];
      if (clientSecret) lines.push(`client_secret: ${clientSecret}   (shown only now: store it)`);
      return { text: lines.join('\n'), json: { ...describeApp(app, owner.email), client_secret: clientSecret } };
    });
  },

  async 'apps update'({ config, values, args }) {
    const clientId = onePositional(args, 'CLIENT_ID');
    const changes: Partial<appsDomain.AppSettings> = {};
    if (typeof values.name === 'string') changes.name = values.name;
    if (typeof values.scopes === 'string') changes.scopes = scopeList(values.scopes);
    if (values['redirect-uri']) changes.redirectUris = values['redirect-uri'] as string[];
    if (typeof values['grant-types'] === 'string') changes.grantTypes = grantTypeList(values['grant-types']);
    if (values['require-dpop'] === true) changes.requireDpop = true;
    if (values['no-require-dpop'] === true) changes.requireDpop = false;
    const requirePar = requireParOption(values);
    if (requirePar !== undefined) changes.requirePar = requirePar;
    if (Object.keys(changes).length === 0) {
      throw new CommandError('nothing to change: give --name, --scopes, --redirect-uri, --grant-types, --require-dpop, --no-require-dpop or --require-par');
    }
    return withStores(config, async (stores) => {
      const app = await appOrFail(stores, clientId);
      const result = await appsDomain.updateAppSettings(stores.apps, systemClock, app, changes);
      return {
        text: `updated app "${result.app.name}"; ${result.grantsRevoked} grant(s) revoked`,
        json: { ...describeApp(result.app), grants_revoked: result.grantsRevoked },
      };
    });
  },

  // RFC 7591 §3: an initial access token for REGISTRATION=token, shown once, stored hashed.
  async 'registration-token create'({ config, values }) {
    const given = values['expires-in'];
    let expiresIn: number | null = null;
    if (given !== undefined) {
      expiresIn = Number(given);
      if (typeof given !== 'string' || !/^[0-9]+$/.test(given) || expiresIn < 1) throw new CommandError('--expires-in must be a whole number of seconds, at least 1');
    }
    return withStores(config, async (stores) => {
      const { token, expiresAt } = await createInitialAccessToken({ stores, clock: systemClock }, expiresIn);
      const lines = [`initial access token: ${token}   (shown only now: give it to the developer)`];
      lines.push(expiresAt === null ? 'it does not expire' : `it expires at ${new Date(expiresAt * 1000).toISOString()}`);
      if (config.registration.mode !== 'token') lines.push(`note: REGISTRATION is ${config.registration.mode}; tokens are asked for only when it is token`);
      return { text: lines.join('\n'), json: { initial_access_token: token, expires_at: expiresAt } };
    });
  },

  async 'apps rotate-secret'({ config, args }) {
    const clientId = onePositional(args, 'CLIENT_ID');
    return withStores(config, async (stores) => {
      const app = await appOrFail(stores, clientId);
      const clientSecret = await appsDomain.rotateClientSecret(stores, systemClock, app);
      return {
        text: `client_secret: ${clientSecret}   (shown only now; the old secret no longer works)`,
        json: { client_id: app.clientId, client_secret: clientSecret },
      };
    });
  },

  // docs/migrating-from-fitbit.md, "Subscriptions": the app's Fitbit-compatible subscriber.
  async 'apps fitbit-subscriber'(input) {
    const { config, values, args } = input;
    const clientId = onePositional(args, 'CLIENT_ID');
    const given = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
    const changes = given('url') ?? given('subscriber-id') ?? given('verification-code') ?? (values['client-secret-stdin'] || values['rotate-secret'] || undefined);
    const actions = [changes !== undefined, values['verify-again'] === true, values.remove === true].filter(Boolean).length;
    if (actions > 1) throw new CommandError('give settings (--url …), --verify-again or --remove, one at a time');
    if (values['client-secret-stdin'] && values['rotate-secret']) throw new CommandError('give --client-secret-stdin or --rotate-secret, not both');
    return withStores(config, async (stores) => {
      const app = await appOrFail(stores, clientId);
      const ctx = { stores, config, clock: systemClock };
      if (values.remove) {
        if (!(await stores.fitbitSubscriptions.removeSubscriber(app.id))) throw new CommandError(`"${app.name}" has no Fitbit-compatible subscriber`);
        return { text: `removed the Fitbit-compatible subscriber of "${app.name}" with its subscriptions`, json: { client_id: app.clientId, removed: true } };
      }
      if (values['verify-again'] && !(await stores.fitbitSubscriptions.verifyAgain(app.id, systemClock()))) {
        throw new CommandError(`"${app.name}" has no subscriber waiting for its verification`);
      }
      let rotatedSecret: string | undefined;
      if (changes !== undefined) {
        const current = await stores.fitbitSubscriptions.subscriber(app.id);
        const url = given('url') ?? current?.url;
        if (url === undefined) throw new CommandError('--url is required for a new subscriber');
        let clientSecret = values['client-secret-stdin'] ? (await input.readStdin()).split(/\r?\n/)[0] : undefined;
        if (values['client-secret-stdin'] && !clientSecret) throw new CommandError('--client-secret-stdin read no secret from standard input');
        if (values['rotate-secret']) {
          // The URL is checked first: a refused subscriber leaves the secret as it was.
          const problem = targetProblem(url.trim(), config.webhooks.allowPrivate);
          if (problem) throw new CommandError(problem);
          clientSecret = rotatedSecret = await appsDomain.rotateClientSecret(stores, systemClock, app);
        }
        const rotatedApp = rotatedSecret === undefined ? app : ((await stores.apps.findById(app.id)) ?? app);
        await setSubscriber(ctx, rotatedApp, { url, subscriberId: given('subscriber-id'), verificationCode: given('verification-code'), clientSecret }).catch(failWith(SubscriberInputError));
      }
      const subscriber = await stores.fitbitSubscriptions.subscriber(app.id);
      if (!subscriber) return { text: `"${app.name}" has no Fitbit-compatible subscriber`, json: { client_id: app.clientId, subscriber: null } };
      const shown = publicSubscriber(subscriber);
      const lines = [
        `${shown.state.padEnd(10)} ${shown.url}   subscriber id ${shown.subscriber_id}`,
        `verification code: ${shown.verification_code}${shown.state === 'unverified' ? `   (answer GET ?verify=<this code> with 204, any other code with 404${shown.verification_error ? `; last try: ${shown.verification_error}` : ''})` : ''}`,
      ];
      if (rotatedSecret !== undefined) lines.push(`client_secret: ${rotatedSecret}   (shown only now; the old secret no longer works; notifications are signed with this one)`);
      return { text: lines.join('\n'), json: { client_id: app.clientId, subscriber: shown, ...(rotatedSecret !== undefined && { client_secret: rotatedSecret }) } };
    });
  },

  async 'apps delete'({ config, args }) {
    const clientId = onePositional(args, 'CLIENT_ID');
    return withStores(config, async (stores) => {
      const app = await appOrFail(stores, clientId);
      await stores.apps.delete(app.id);
      return { text: `deleted app "${app.name}" and every token issued to it`, json: { deleted: app.clientId } };
    });
  },

  async 'apps list'({ config, values }) {
    return withStores(config, async (stores) => {
      let ownerId: string | undefined;
      if (typeof values.owner === 'string') {
        ownerId = (await userByEmail(stores, values.owner)).id;
      }
      const apps = await stores.apps.list(ownerId);
      const described = await Promise.all(
        apps.map(async (app) => describeApp(app, (await stores.users.findById(app.ownerId))?.email)),
      );
      const text = described.length
        ? described.map((a) => `${a.client_id}  ${a.type.padEnd(12)} ${a.name}  [${a.scopes.join(' ')}]  owner ${a.owner}`).join('\n')
        : 'no apps';
      return { text, json: described };
    });
  },

  async import(input) {
    if (input.values.takeout !== undefined) return takeoutCommand(input);
    const { user, written, readings } = await importFile(input, kindOption(input.values));
    const made = describeWritten(written, readings);
    return { text: `imported for ${user}: ${made || 'nothing (the file holds no records)'}`, json: { user, imported: written, ...(readings !== undefined && { readings }) } };
  },

  /** The first form of `stride import --kind steps`, kept with its words. */
  async 'steps import'(input) {
    const { user, written } = await importFile(input, 'steps');
    const imported = written.steps ?? 0;
    return { text: `imported ${imported} minute sample(s) for ${user}`, json: { imported, user } };
  },

  async demo({ config }) {
    const result = await withStores(config, (stores) => runDemo(stores, config, systemClock)).catch(failWith(DemoServerProblem));
    return { text: result.text, json: result.json };
  },

  async 'sandbox add'({ config, values }) {
    const ownerEmail = required(values, 'owner');
    return withStores(config, async (stores) => {
      const owner = await developerByEmail(stores, ownerEmail);
      const people = await addTestPeople(stores, owner, systemClock(), { days: config.sandbox.days, coalesceSeconds: config.webhooks.coalesceSeconds });
      return {
        text: [`added ${people.length} test people for ${owner.email}, each with ${config.sandbox.days} days of data of every kind:`, testPeopleLines(people)].join('\n'),
        json: people.map(describeTestPerson),
      };
    });
  },

  async 'sandbox list'({ config, values }) {
    const ownerEmail = required(values, 'owner');
    return withStores(config, async (stores) => {
      const owner = await developerByEmail(stores, ownerEmail);
      const people = await stores.testPeople.listOf(owner.id);
      return { text: people.length ? testPeopleLines(people) : `${owner.email} has no test people`, json: people.map(describeTestPerson) };
    });
  },

  async 'webhooks add'({ config, values, args }) {
    const clientId = onePositional(args, 'CLIENT_ID');
    const url = required(values, 'url');
    const events = required(values, 'events');
    return withStores(config, async (stores) => {
      const app = await appOrFail(stores, clientId);
      const endpoint = await addEndpoint(stores.webhooks, config, app.id, { url, events }, systemClock()).catch(failWith(EndpointInputError));
      return {
        text: [`added endpoint ${endpoint.id} for "${app.name}" (unverified until it answers the challenge)`, `secret: ${endpoint.secret}   (shown only now: store it)`].join('\n'),
        json: { ...publicEndpoint(endpoint), secret: endpoint.secret },
      };
    });
  },

  async 'webhooks list'({ config, args }) {
    const clientId = onePositional(args, 'CLIENT_ID');
    return withStores(config, async (stores) => {
      const app = await appOrFail(stores, clientId);
      const endpoints = (await stores.webhooks.list(app.id)).map(publicEndpoint);
      const text = endpoints.length ? endpoints.map((e) => `${e.id}  ${e.state.padEnd(10)} ${e.url}  [${e.events.join(' ')}]`).join('\n') : 'no endpoints';
      return { text, json: endpoints };
    });
  },

  async 'webhooks update'({ config, values, args }) {
    const id = onePositional(args, 'ID');
    if (values.paused && values.active) throw new CommandError('give --paused or --active, not both');
    const input = {
      ...(typeof values.url === 'string' && { url: values.url }),
      ...(typeof values.events === 'string' && { events: values.events }),
      ...(values.paused ? { state: 'paused' as const } : values.active ? { state: 'active' as const } : {}),
    };
    if (Object.keys(input).length === 0) throw new CommandError('nothing to change: give --url, --events, --paused or --active');
    return withStores(config, async (stores) => {
      const endpoint = await updateEndpoint(stores.webhooks, config, id, input, systemClock()).catch(failWith(EndpointInputError));
      if (!endpoint) throw new CommandError(`no webhook endpoint ${id}`);
      return { text: `updated endpoint ${endpoint.id}: ${endpoint.state}, ${endpoint.url}`, json: publicEndpoint(endpoint) };
    });
  },

  async 'webhooks rotate-secret'({ config, args }) {
    const id = onePositional(args, 'ID');
    return withStores(config, async (stores) => {
      const endpoint = await stores.webhooks.rotateSecret(id, systemClock(), SECRET_OVERLAP_SECONDS);
      if (!endpoint) throw new CommandError(`no webhook endpoint ${id}`);
      return {
        text: `secret: ${endpoint.secret}   (shown only now; the old secret also signs for 24 hours)`,
        json: { id: endpoint.id, secret: endpoint.secret, previous_secret_until: endpoint.previous_secret_until },
      };
    });
  },

  async 'webhooks delete'({ config, args }) {
    const id = onePositional(args, 'ID');
    return withStores(config, async (stores) => {
      if (!(await stores.webhooks.delete(id))) throw new CommandError(`no webhook endpoint ${id}`);
      return { text: `deleted endpoint ${id}`, json: { deleted: id } };
    });
  },

  async backup({ config, args }) {
    const file = onePositional(args, 'FILE');
    const db = openDatabase(config.databaseUrl, { transactionPooling: config.databaseTransactionPooling });
    try {
      const copy = await backupDatabase(db, file).catch(failWith(BackupError));
      return { text: `backed up the database to ${copy.file} (${copy.bytes} bytes)`, json: copy };
    } finally {
      await db.close();
    }
  },

  async restore({ config, args }) {
    const file = onePositional(args, 'FILE');
    const restored = await restoreDatabase(config.databaseUrl, file).catch(failWith(BackupError));
    return { text: `restored the database from ${restored.file}`, json: restored };
  },
};
