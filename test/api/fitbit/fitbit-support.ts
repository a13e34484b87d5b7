/** Requests to the Fitbit-compatible face in tests, and the /v1 answers they are compared with. */
import assert from 'node:assert/strict';
import type { TestApp } from '../../support/app.js';
import { addTestPeople } from '../../../src/domain/test-people.js';
import type { TestPerson } from '../../../src/store/test-people.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, issueAccessToken } from '../../support/tokens.js';

/** The content type of Fitbit's writes. */
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

export async function fitbitGet(t: TestApp, token: string, path: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url: path, headers: { ...bearer(token), ...headers } });
}

/** The JSON of a 200 answer of the face. */
export async function fitbitJson<T = Record<string, unknown>>(t: TestApp, token: string, path: string, headers: Record<string, string> = {}): Promise<T> {
  const response = await fitbitGet(t, token, path, headers);
  assert.equal(response.statusCode, 200, `${path}: ${response.body.slice(0, 300)}`);
  return response.json() as T;
}

/** The body of an error in Fitbit's shape, checked to be one: its one error. */
export function fitbitErrorOf(body: string): { errorType: string; fieldName: string; message: string } {
  const parsed = JSON.parse(body) as { errors: Array<{ errorType: string; fieldName: string; message: string }>; success: boolean };
  assert.equal(parsed.success, false);
  assert.equal(parsed.errors.length, 1);
  assert.deepEqual(Object.keys(parsed.errors[0]!).sort(), ['errorType', 'fieldName', 'message']);
  return parsed.errors[0]!;
}

/** A developer's test people, one of each life with `days` days of data up to `now`, each with a token of every scope. */
export async function testPeopleWithTokens(t: TestApp, now: number, days: number): Promise<Array<{ person: TestPerson; token: string }>> {
  const developer = await createUser(t);
  const owner = (await t.database.stores.users.findById(developer.id))!;
  const made = await addTestPeople(t.database.stores, owner, now, { days, coalesceSeconds: 0 });
  const people = [];
  for (const person of made) people.push({ person, token: (await issueAccessToken(t, { id: person.id, email: person.email }, ALL_RESOURCE_SCOPES)).token });
  return people;
}
