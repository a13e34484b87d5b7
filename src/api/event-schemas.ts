/** The schemas of the event feed and the webhook endpoints an app manages (docs/webhooks.md). */
import { EVENT_TYPES } from '../store/events.js';
import { CLIENT_BASIC, answer, errorAnswers } from '../http/schemas.js';

const tags = ['Events and webhooks'];

/**
 * What an event says (docs/webhooks.md): ids, dates and ranges, never the data itself. A data
 * event names its local `dates` and, per date, one range: `ranges[i]` covers what changed on
 * `dates[i]`. Events stored before ranges were told per date keep theirs, one per run of minutes,
 * and are served as they were stored.
 */
const EVENT_DATA = {
  type: 'object',
  additionalProperties: true,
  description: 'ids, dates and ranges, never the data itself (docs/webhooks.md); each type adds its own fields (fields, scopes, reason, cause, start_date, end_date)',
  properties: {
    user_id: { type: 'string', description: 'the id of the profile resource' },
    dates: {
      type: 'array',
      items: { type: 'string', format: 'date' },
      description: 'data events: the local dates (YYYY-MM-DD, the person\'s zone) the change touched, ascending',
    },
    ranges: {
      type: 'array',
      items: {
        type: 'object',
        required: ['start_time', 'end_time'],
        additionalProperties: false,
        properties: { start_time: { type: 'integer' }, end_time: { type: 'integer', description: 'exclusive' } },
      },
      description:
        'steps, distance, calories, heart rate and sleep: one range per date, ranges[i] covering what changed on dates[i] (Unix seconds, end exclusive); a stride change\'s distance.updated: one range, with start_date and end_date instead of dates; events stored before ranges were told per date list one per run of minutes',
    },
  },
} as const;

const EVENT = {
  type: 'object',
  required: ['id', 'type', 'timestamp', 'data'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'evt_…; the same in the feed and in every delivery' },
    type: { type: 'string', enum: EVENT_TYPES },
    timestamp: { type: 'string', format: 'date-time' },
    data: EVENT_DATA,
  },
} as const;


const ENDPOINT_PROPERTIES = {
  id: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string', enum: EVENT_TYPES } },
  state: { type: 'string', enum: ['unverified', 'active', 'paused', 'failing'] },
  verification_error: { type: ['string', 'null'], description: 'while unverified: why the last verification failed' },
  created_at: { type: 'integer' },
} as const;

const ENDPOINT = { type: 'object', required: ['id', 'url', 'events', 'state', 'created_at'], additionalProperties: false, properties: ENDPOINT_PROPERTIES } as const;

const ENDPOINT_WITH_SECRET = {
  type: 'object',
  required: ['id', 'url', 'events', 'state', 'created_at', 'secret'],
  additionalProperties: false,
  properties: {
    ...ENDPOINT_PROPERTIES,
    secret: { type: 'string', description: 'whsec_…, shown this once' },
    previous_secret_until: { type: ['integer', 'null'], description: 'after a rotation: the old secret signs beside the new one until then' },
  },
} as const;

const DELETED_ENDPOINT = {
  type: 'object',
  required: ['id', 'url', 'events', 'state', 'created_at', 'deleted'],
  additionalProperties: false,
  properties: { ...ENDPOINT_PROPERTIES, deleted: { const: true } },
} as const;

const ID = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;

export const FEED = {
  tags,
  summary: 'The app\'s events in order, from a cursor',
  security: CLIENT_BASIC,
  querystring: {
    type: 'object',
    properties: {
      after: { type: 'string', description: 'next_cursor of the previous page; from the start without it' },
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    },
  },
  response: {
    200: {
      description: 'A page of the app\'s events, oldest first; next_cursor continues after the last one',
      type: 'object',
      required: ['data', 'next_cursor'],
      additionalProperties: false,
      properties: { data: { type: 'array', items: EVENT }, next_cursor: { type: 'string' } },
    },
    ...errorAnswers(400, 401),
  },
};

export const LIST = {
  tags,
  summary: 'The app\'s webhook endpoints',
  security: CLIENT_BASIC,
  response: { 200: answer('The app\'s webhook endpoints', { type: 'object', required: ['data'], properties: { data: { type: 'array', items: ENDPOINT } } }), ...errorAnswers(401) },
};

export const ADD = {
  tags,
  summary: 'Add an endpoint; it is verified before anything is delivered',
  security: CLIENT_BASIC,
  body: {
    type: 'object',
    required: ['url', 'events'],
    properties: {
      url: { type: 'string', description: 'https:// and a public address (WEBHOOK_ALLOW_PRIVATE lifts both)' },
      events: { anyOf: [{ type: 'array', minItems: 1, items: { type: 'string', enum: EVENT_TYPES } }, { type: 'string', description: 'the names separated by commas' }] },
    },
  },
  response: { 200: answer('The endpoint, with its signing secret (shown here and at rotation only); a verification challenge is on its way to the URL', ENDPOINT_WITH_SECRET), ...errorAnswers(400, 401, 413, 415) },
};

export const CHANGE = {
  tags,
  summary: 'Change an endpoint\'s URL (verified again), events, or pause and resume it',
  security: CLIENT_BASIC,
  params: ID,
  body: {
    type: 'object',
    properties: {
      url: { type: 'string' },
      events: { type: 'array', minItems: 1, items: { type: 'string', enum: EVENT_TYPES } },
      state: { type: 'string', enum: ['active', 'paused'] },
    },
  },
  response: { 200: answer('The endpoint as changed', ENDPOINT), ...errorAnswers(400, 401, 404, 413, 415) },
};

export const ROTATE = {
  tags,
  summary: 'A new signing secret; the old one signs beside it for 24 hours',
  security: CLIENT_BASIC,
  params: ID,
  response: { 200: answer('The endpoint with its new secret; the old one signs nothing from now on', ENDPOINT_WITH_SECRET), ...errorAnswers(401, 404) },
};

export const DELETE = {
  tags,
  summary: 'Delete an endpoint and its pending deliveries; the answer is the endpoint as it was, with "deleted": true',
  security: CLIENT_BASIC,
  params: ID,
  response: { 200: answer('The endpoint was deleted', DELETED_ENDPOINT), ...errorAnswers(401, 404) },
};
