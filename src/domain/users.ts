/** Creating accounts: shared by sign-up, `stride users create` and `stride demo`. */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { ApiError, invalidRequest } from '../errors.js';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../security/passwords.js';
import type { User, UserStore } from '../store/users.js';
import { readsAsServiceName, reservedNameProblem, SERVICE_NAME } from './reserved-names.js';

export const DISPLAY_NAME_MAX_LENGTH = 100;
const EMAIL_PATTERN = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

/** Whether `email` (trimmed) could be an account's: sign-in looks up nothing else. */
export function isEmailSyntax(email: string): boolean {
  return email.length <= 254 && EMAIL_PATTERN.test(email);
}

/** What is wrong with a display name (trimmed), or null: shared by sign-up and the profile. */
export function displayNameProblem(name: string): string | null {
  if (name === '') return 'display_name must not be empty';
  if ([...name].length > DISPLAY_NAME_MAX_LENGTH) return `display_name must be at most ${DISPLAY_NAME_MAX_LENGTH} characters`;
  // Control characters would corrupt pages and logs that show the name.
  if (/\p{Cc}/u.test(name)) return 'display_name must not contain control characters';
  // Shown as the maker of the person's apps, on other people's consent pages.
  return unicodeTextProblem('display_name', name) ?? reservedNameProblem('display_name', name);
}

/** The display name of an account made without one: the email's first part. */
export function defaultDisplayName(email: string): string {
  return email.trim().toLowerCase().split('@')[0]!;
}

/** Why an account made without a display name needs one, or null: its default reads as the service. */
export function defaultDisplayNameProblem(email: string): string | null {
  const name = defaultDisplayName(email);
  return readsAsServiceName(name) ? `display_name is needed: the email's first part, "${name}", reads as "${SERVICE_NAME}", the name of this service` : null;
}

/** Bidirectional controls: they reorder the text around them, e.g. "Made by …" on a consent page. */
export const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * What makes `value` unfit to show as a name, or null: a lone surrogate (a JSON string may carry
 * one; it is not text, and the database would store U+FFFD instead), U+FFFD itself (the mark of
 * input that was not valid UTF-8, e.g. a command-line argument), or a bidirectional control.
 */
export function unicodeTextProblem(field: string, value: string): string | null {
  if (/\p{Cs}/u.test(value)) return `${field} must be valid Unicode text (it contains a lone surrogate)`;
  if (value.includes('\ufffd')) return `${field} must not contain U+FFFD, the mark of text that was not valid UTF-8`;
  if (BIDI_CONTROLS.test(value)) return `${field} must not contain bidirectional control characters`;
  return null;
}

export interface NewAccount {
  email: string;
  password: string;
  displayName?: string;
}

/** Returns a description of the first invalid field, or null. */
export function validateNewAccount(input: NewAccount): { field: keyof NewAccount; message: string } | null {
  const email = input.email.trim();
  if (!isEmailSyntax(email)) {
    return { field: 'email', message: 'email must be an email address like name@example.com' };
  }
  const badPassword = passwordProblem(input.password);
  if (badPassword !== null) return { field: 'password', message: badPassword };
  const nameProblem = input.displayName === undefined ? defaultDisplayNameProblem(email) : displayNameProblem(input.displayName.trim());
  if (nameProblem !== null) return { field: 'displayName', message: nameProblem };
  return null;
}

/** Why `password` cannot be one, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

export class DuplicateEmailError extends ApiError {
  constructor(email: string) {
    super('conflict', `an account with email ${email} already exists`);
  }
}

/**
 * Creates the account, or returns null when the email already has one. Either way the password
 * is hashed with Argon2id first, so the two outcomes take the same time: sign-up must not tell
 * a stranger which emails have accounts (docs/web.md).
 */
export async function createAccountIfFree(users: UserStore, clock: Clock, input: NewAccount): Promise<User | null> {
  const invalid = validateNewAccount(input);
  if (invalid) throw invalidRequest(invalid.message);
  const email = input.email.trim().toLowerCase();
  const [existing, passwordHash] = await Promise.all([users.findByEmail(email), hashPassword(input.password)]);
  if (existing) return null;
  const now = clock();
  const user = {
    id: randomUUID(),
    email,
    password_hash: passwordHash,
    display_name: input.displayName?.trim() || defaultDisplayName(email),
    timezone: 'UTC',
    daily_step_goal: 10000,
    stride_length_cm: null,
    birth_year: null,
    max_heart_rate: null,
    created_at: now,
    updated_at: now,
    test_person_owner_id: null,
  };
  try {
    await users.insert(user);
  } catch (error) {
    // Two sign-ups with one email at the same moment: the unique index decides.
    if (await users.findByEmail(email)) return null;
    throw error;
  }
  return user;
}

/** For operators (`stride users create`, `stride demo`): a taken email is an error that says so. */
export async function createAccount(users: UserStore, clock: Clock, input: NewAccount): Promise<User> {
  const user = await createAccountIfFree(users, clock, input);
  if (!user) throw new DuplicateEmailError(input.email.trim().toLowerCase());
  return user;
}

/**
 * For operators (`stride users set-password`), when a person cannot sign in: a new password, and
 * every session of theirs ends. The apps they allowed stay connected (their account page lists
 * them, to revoke).
 */
export async function setPassword(users: UserStore, clock: Clock, user: User, password: string): Promise<void> {
  // A test person has no password to sign in with (docs/decisions/0024-test-people.md).
  if (user.test_person_owner_id !== null) throw invalidRequest(`${user.email} is a test person: test people cannot sign in, so they have no password`);
  const problem = passwordProblem(password);
  if (problem !== null) throw invalidRequest(problem);
  await users.changePassword(user.id, await hashPassword(password), null, clock());
}

/**
 * For operators (`stride users delete`): the account and everything kept about it, as when the
 * person deletes it on the account page — every app they allowed loses its grant and hears of it.
 * Like that page, it refuses while they own apps, whose users would lose their connections unwarned.
 */
export async function deleteAccount(users: UserStore, clock: Clock, user: User): Promise<void> {
  const owned = await users.countOwnedApps(user.id);
  if (owned > 0) throw new ApiError('conflict', `${user.email} owns ${owned} app${owned === 1 ? '' : 's'}: delete them first (stride apps list --owner ${user.email})`);
  await users.deleteAccount(user.id, clock());
}
