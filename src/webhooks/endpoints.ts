/**
 * Adding and changing webhook endpoints, as the dashboard, the CLI and the apps' own JSON API
 * do it (docs/webhooks.md): the same checks and the same answers everywhere.
 */
import type { Config } from '../config.js';
import { EVENT_TYPES } from '../store/events.js';
import type { EndpointChanges, WebhookEndpoint, WebhookStore } from '../store/webhooks.js';
import { targetProblem } from './targets.js';

/** A rule of endpoints broken by the input; `field` names what it is about, when it is one field. */
export class EndpointInputError extends Error {
  constructor(message: string, readonly field: 'url' | 'events' | null = null) {
    super(message);
  }
}

/** The endpoints one app may have. */
export const MAX_ENDPOINTS_PER_APP = 10;
/** After a rotation, the old secret signs beside the new one this long. */
export const SECRET_OVERLAP_SECONDS = 86400;

export function parseEventTypes(raw: string | readonly string[]): string[] {
  const names = (typeof raw === 'string' ? raw.split(/[\s,]+/) : [...raw]).map((name) => name.trim()).filter(Boolean);
  if (names.length === 0) throw new EndpointInputError(`name at least one event type: ${EVENT_TYPES.join(', ')}`, 'events');
  const unknown = names.find((name) => !(EVENT_TYPES as readonly string[]).includes(name));
  if (unknown !== undefined) throw new EndpointInputError(`unknown event type "${unknown.slice(0, 40)}"; the types are ${EVENT_TYPES.join(', ')}`, 'events');
  return EVENT_TYPES.filter((name) => names.includes(name));
}

function checkedUrl(config: Config, url: string): string {
  const problem = targetProblem(url.trim(), config.webhooks.allowPrivate);
  if (problem) throw new EndpointInputError(problem, 'url');
  return url.trim();
}

export async function addEndpoint(
  store: WebhookStore,
  config: Config,
  appId: string,
  input: { url: string; events: string | readonly string[] },
  now: number,
  options: { id?: string; showOnce?: boolean } = {},
): Promise<WebhookEndpoint> {
  const url = checkedUrl(config, input.url);
  const events = parseEventTypes(input.events);
  const endpoint = await store.add(appId, url, events, now, { ...options, atMost: MAX_ENDPOINTS_PER_APP });
  if (!endpoint) throw new EndpointInputError(`an app has at most ${MAX_ENDPOINTS_PER_APP} endpoints`);
  return endpoint;
}

export async function updateEndpoint(
  store: WebhookStore,
  config: Config,
  id: string,
  input: { url?: string; events?: string | readonly string[]; state?: 'active' | 'paused' },
  now: number,
): Promise<WebhookEndpoint | undefined> {
  const changes: EndpointChanges = {};
  if (input.url !== undefined) changes.url = checkedUrl(config, input.url);
  if (input.events !== undefined) changes.eventTypes = parseEventTypes(input.events);
  if (input.state !== undefined) changes.state = input.state;
  return store.update(id, changes, now);
}

/** An endpoint as the CLI and the JSON API show it: never its secret (shown once, when made or rotated). */
export function publicEndpoint(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.event_types.split(' '),
    state: endpoint.state,
    ...(endpoint.state === 'unverified' && { verification_error: endpoint.verify_error }),
    created_at: endpoint.created_at,
  };
}
