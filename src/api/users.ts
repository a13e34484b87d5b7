/**
 * The user resource (docs/api.md): `GET` needs read_profile, `PUT` write_profile. Served at
 * /v1/users/me and also at /users, the path apps written before /v1 use. The profile comes with the
 * bearer check (one query); a change is one statement that returns the changed profile. A `PUT`
 * answers the whole profile only to a token that also holds read_profile: write_profile does not
 * read (docs/api.md, "Profile — PUT /v1/users/me"), so without it the answer is the id and the
 * fields the request sent, as stored.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { PROFILE_CHANGES_JSON_SCHEMA, PROFILE_JSON_SCHEMA, parseProfileChanges, type Profile, type ProfileChanges } from '../domain/profile.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { refuseSchemaViolation } from '../http/validation.js';
import { requireScope } from './bearer.js';
import { apiRateLimit } from './rate-limit.js';
import { requireJsonBody } from './json-body.js';
import { StrideChangeTooSoon } from '../store/stride-changes.js';

export const PROFILE_PATHS = ['/v1/users/me', '/users'] as const;

const tags = ['Profile'];
const read = { tags, summary: 'The profile (read_profile)', security: BEARER, response: { 200: answer('The person\'s profile', PROFILE_JSON_SCHEMA), ...errorAnswers(401, 403) } };
/** The whole profile with read_profile; without it, the id and the fields sent (see sentFields). */
const CHANGED_PROFILE_JSON_SCHEMA = { ...PROFILE_JSON_SCHEMA, required: ['id'] } as const;
const write = {
  tags,
  summary: 'Change any of the editable fields (write_profile); answers the profile (only its id and the fields sent without read_profile)',
  security: BEARER,
  body: PROFILE_CHANGES_JSON_SCHEMA,
  response: {
    200: answer('The profile as changed: all of it to a token with read_profile, else its id and the fields the request sent', CHANGED_PROFILE_JSON_SCHEMA),
    ...errorAnswers(400, 401, 403, 413, 415, 429),
  },
};

export async function userRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const limit = apiRateLimit(app);
  const updateProfile = stores.users.updateProfile;

  async function update(userId: string, changes: ProfileChanges): Promise<Profile | undefined> {
    try {
      return await updateProfile(userId, changes, clock());
    } catch (error) {
      if (error instanceof StrideChangeTooSoon) throw new ApiError('rate_limited', error.message, { 'Retry-After': String(error.retryAfterSeconds) });
      throw error;
    }
  }

  function changed(profile: Profile | undefined): Profile {
    // Deleting a user deletes their tokens, so this only happens in a race with the deletion.
    if (!profile) throw new ApiError('invalid_token', 'the user of this access token no longer exists');
    return profile;
  }

  for (const path of PROFILE_PATHS) {
    app.get(path, { config: limit, schema: read, onRequest: requireScope('read_profile') }, (request) => request.auth.profile);

    app.put(path, { config: limit, schema: write, attachValidation: true, onRequest: requireScope('write_profile'), preValidation: requireJsonBody }, async (request) => {
      const changes = parseProfileChanges(request.body, clock());
      refuseSchemaViolation(request);
      const profile = Object.keys(changes).length === 0 ? request.auth.profile : changed(await update(request.auth.userId, changes));
      return request.auth.scopes.includes('read_profile') ? profile : sentFields(profile, changes);
    });
  }
}

/**
 * What a PUT answers a token without read_profile: the profile's id (the token's `sub`, which
 * introspection tells any app of its own token) and, as stored, the fields the request sent — the
 * trimmed name, the IANA spelling of the zone: nothing the request did not say. `{}` gets `{"id"}`.
 */
function sentFields(profile: Profile, changes: ProfileChanges): Partial<Profile> & Pick<Profile, 'id'> {
  const answer: Partial<Profile> & Pick<Profile, 'id'> = { id: profile.id };
  for (const field of Object.keys(changes) as Array<keyof ProfileChanges>) Object.assign(answer, { [field]: profile[field] });
  return answer;
}
