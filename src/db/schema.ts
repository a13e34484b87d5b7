/**
 * Row types for every table. Times are integer Unix seconds on both dialects; ids are UUID text
 * made by the application (crypto.randomUUID), so migrations stay portable (no NOW(), no
 * gen_random_uuid()). Booleans are stored as 0/1 integers for the same reason.
 */
import type { Generated } from 'kysely';
import type { SeriesMetric } from './series-metrics.js';

export interface UserTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  /** Argon2id PHC string. */
  password_hash: string;
  display_name: string;
  /** IANA zone name. */
  timezone: Generated<string>;
  daily_step_goal: Generated<number>;
  stride_length_cm: number | null;
  /** Optional; with max_heart_rate, what heart-rate zones are counted from (domain/heart-rate-zones.ts). */
  birth_year: number | null;
  max_heart_rate: number | null;
  created_at: number;
  updated_at: number;
  /** PostgreSQL with a replica: the WAL position after the user's latest step upload (store/replica.ts). */
  steps_written_lsn: string | null;
  /** Set for a test person: the developer who owns them (docs/decisions/0024-test-people.md). */
  test_person_owner_id: string | null;
}

/** The made-up life of a test person (store/test-people.ts). */
export interface TestPersonTable {
  user_id: string;
  life: string;
  seed: number;
  /** ISO local date of the first day of data. */
  first_date: string;
  /** Data exists up to this time, exclusive. */
  synced_until: number;
  created_at: number;
}

/** A person's last stride-length change and the recomputation of their distance it started. */
export interface StrideChangeTable {
  user_id: string;
  changed_at: number;
  /** 1 while days with steps still hold distance sums of the stride before. */
  pending: number;
  /** The last UTC day start recomputed; null: none yet. */
  done_through: number | null;
}

/**
 * What an import changed on one of the person's local dates, waiting for the import's end to be
 * told (store/takeout-imports.ts): which event types, and per type a range covering its changes.
 */
export interface TakeoutImportDateTable {
  import_id: string;
  /** The person's local date, in days since 1970-01-01. */
  day: number;
  /** A bit per event type that changed something on the date (store/takeout-imports.ts, TYPE_BITS). */
  types: number;
  /** Per type, [start, end) in Unix seconds covering its changes on the date; null: none told. */
  steps_start: number | null;
  steps_end: number | null;
  distance_start: number | null;
  distance_end: number | null;
  calories_start: number | null;
  calories_end: number | null;
  heartrate_start: number | null;
  heartrate_end: number | null;
  sleep_start: number | null;
  sleep_end: number | null;
}

/** An import of a Google Takeout archive (store/takeout-imports.ts). */
export interface TakeoutImportTable {
  id: string;
  user_id: string;
  archive_path: string;
  archive_name: string;
  archive_bytes: number;
  archive_fingerprint: string;
  /** 1: the server stored the upload and removes it when the import ends. */
  owns_archive: number;
  state: 'reading' | 'previewed' | 'queued' | 'running' | 'done' | 'cancelled' | 'failed' | 'expired';
  timezone: string;
  /** JSON: what the archive holds (store/takeout-imports.ts, TakeoutPreview); `null` while it is read. */
  preview: string;
  files_total: number;
  next_file: number;
  next_part: number;
  /** JSON: ImportReport. */
  report: string;
  /** Empty ('{}') since migration 020: the waiting changes are rows of takeout_import_dates (migration 023). */
  pending_events: string;
  cancel_requested: number;
  lease_owner: string | null;
  lease_until: number | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface AppTable {
  id: string;
  /** A small number of the app's own, by which its events are kept (`events.app_number`). */
  number: Generated<number>;
  client_id: string;
  /** SHA-256 of the client secret; null for public apps. */
  client_secret_hash: string | null;
  owner_id: string;
  name: string;
  description: Generated<string>;
  website_url: Generated<string>;
  /** JSON array of exact redirect URIs. */
  redirect_uris: string;
  /** Space-separated, sorted scope names the app may ask for. */
  scopes: string;
  /** 1 for public clients (no secret, PKCE required). */
  is_public: number;
  /** 1 when every token request must carry a DPoP proof (RFC 9449): no bearer tokens. */
  require_dpop: Generated<number>;
  created_at: number;
  updated_at: number;
  /** Space-separated grant types the app may use at the token endpoint (RFC 7591 §2). */
  grant_types: Generated<string>;
  /** 1: authorization requests only through PAR (RFC 9126 §6). */
  require_par: Generated<number>;
  /** SHA-256 of the RFC 7592 registration access token; null unless registered through RFC 7591. */
  registration_token_hash: string | null;
  /** JSON of RFC 7591 metadata kept only to be read back; null unless registered through RFC 7591. */
  registration_metadata: string | null;
}

/** RFC 9126: an authorization request pushed by its client, used once by its request_uri. */
export interface PushedAuthorizationRequestTable {
  request_uri_hash: string;
  app_id: string;
  /** JSON object of the request's parameters. */
  parameters: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

/** RFC 7591 §3: an initial access token the operator made with the CLI. */
export interface RegistrationTokenTable {
  token_hash: string;
  expires_at: number | null;
  created_at: number;
}

/** A user's standing permission for an app: the scope set they consented to. */
export interface GrantTable {
  id: string;
  user_id: string;
  app_id: string;
  scope: string;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
}

export interface AuthorizationCodeTable {
  /** SHA-256 of the code. */
  code_hash: string;
  app_id: string;
  user_id: string;
  grant_id: string;
  redirect_uri: string;
  scope: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: number;
  /** Set when the code was exchanged; a second exchange revokes its token family. */
  consumed_at: number | null;
  created_at: number;
  /**
   * The request's scope as the app worded it, when it used Fitbit's scope words (the token
   * responses then name them, domain/scope-request.ts); null when it named Stride's scopes alone.
   */
  requested_scope: string | null;
}

/** A device authorization request (RFC 8628 §3.1), kept by the hashes of its two codes. */
export interface DeviceCodeTable {
  device_code_hash: string;
  user_code_hash: string;
  app_id: string;
  scope: string;
  status: 'pending' | 'approved' | 'denied' | 'used';
  user_id: string | null;
  grant_id: string | null;
  poll_interval: number;
  last_polled_at: number | null;
  expires_at: number;
  created_at: number;
  /** As for authorization codes. */
  requested_scope: string | null;
}

export interface AccessTokenTable {
  /** tokenKey(token): the issue time and the SHA-256 of the token, never the token itself. */
  token_key: string;
  /** Tokens issued from one authorization code share a family (RFC 9700 §4.14.2). */
  family_id: string;
  /** The only foreign key: deleting the grant (or its user or app) deletes the token. */
  grant_id: string;
  /** The grant's app and user, copied for the bearer check; not foreign keys, not indexed. */
  app_id: string;
  user_id: string;
  scope: string;
  expires_at: number;
  created_at: number;
  /** RFC 7638 thumbprint of the DPoP key the token is bound to (RFC 9449 §6); null for a bearer token. */
  jkt: string | null;
}

export interface RefreshTokenTable {
  /** tokenKey(token), as for access tokens. */
  token_key: string;
  family_id: string;
  /** As for access tokens: the only foreign key; app_id and user_id are unindexed copies. */
  grant_id: string;
  app_id: string;
  user_id: string;
  scope: string;
  expires_at: number;
  created_at: number;
  /** When this token was exchanged for a new pair; null while it is the live one. */
  rotated_at: number | null;
  /**
   * The response of that exchange, encrypted with a key derived from this refresh token itself,
   * so a retry inside the replay window gets the same answer while the server keeps no usable
   * secret (only the holder of the old token can decrypt it).
   */
  replay_response: string | null;
  /** As for access tokens; set for public clients' DPoP-bound refresh tokens (RFC 9449 §5). */
  jkt: string | null;
  /** Its code's (or device request's), carried to each successor: what its refreshes answer in. */
  requested_scope: string | null;
}

/** Proof identifiers seen within the DPoP proof window (RFC 9449 §11.1). */
export interface DpopProofTable {
  proof_key: string;
  expires_at: number;
}

export interface SessionTable {
  /** SHA-256 of the session cookie value. */
  id_hash: string;
  user_id: string;
  /** Per-session secret for CSRF tokens. */
  csrf_secret: string;
  created_at: number;
  expires_at: number;
  /** The User-Agent header of the sign-in, cut to 300 characters. */
  user_agent: string | null;
  /** The client address of the sign-in (TRUST_PROXY decides which one). */
  address: string | null;
  /** Updated at most once a minute (store/sessions.ts). */
  last_seen_at: number | null;
}

/** The metrics of the series store, declared once in series-metrics.ts. */
export type { SeriesMetric, SumMetric } from './series-metrics.js';

/**
 * One person × metric × UTC day of a minute series (db/codec/minute-values.ts): the day's total, its 24
 * hourly sums and its minutes, packed. Calories are kept in tenths of a kcal; a distance row's sums
 * also count the distance derived from steps (db/derived-distance.ts). Heart rate
 * (db/codec/heart-rate-minutes.ts) keeps aggregates in them instead of sums, its total a 58-bit integer
 * written as a BigInt.
 */
export interface SeriesDayTable {
  user_id: string;
  metric: SeriesMetric;
  day_start: number;
  total: number | bigint;
  hours: Uint8Array;
  minutes: Uint8Array;
}

/**
 * One sleep session (migration 008): keyed by its start, its stages packed from it
 * (db/codec/sleep-stages.ts). Sessions of a person never overlap (store/sleep.ts).
 */
export interface SleepSessionTable {
  user_id: string;
  start_time: number;
  end_time: number;
  /** The random part of the session's public id (store/record-ids.ts). */
  id_tag: number;
  stages: Uint8Array;
}

/** One body weight measurement (migration 008), keyed by its time. */
export interface BodyWeightTable {
  user_id: string;
  time: number;
  /** The random part of the measurement's public id (store/record-ids.ts). */
  id_tag: number;
  /** The weight in hundredths of a kilogram (70.15 kg: 7015). */
  kg_hundredths: number;
  /** Body fat in hundredths of a percent; null when none was sent. */
  fat_hundredths: number | null;
}

/** A secret of the server itself, made once by whichever process needs it first. */
export interface ServerSecretTable {
  name: string;
  /** 32 random bytes, base64url. */
  value: string;
  created_at: number;
}

export type WebhookEndpointState = 'unverified' | 'active' | 'paused' | 'failing';

/** Where an app wants its events sent (docs/webhooks.md). */
export interface WebhookEndpointTable {
  id: string;
  app_id: string;
  url: string;
  /** The event types it wants, space-separated. */
  event_types: string;
  state: WebhookEndpointState;
  /** `whsec_…` (Standard Webhooks): kept as is, since it signs. */
  secret: string;
  /** After a rotation, the old secret signs too until previous_secret_until. */
  previous_secret: string | null;
  previous_secret_until: number | null;
  /** 1 while a secret made on the dashboard waits to be shown there, once. */
  secret_unshown: number;
  /** The verification under way (state unverified): its challenge and when it is next sent. */
  challenge: string | null;
  verify_at: number | null;
  verify_attempts: number;
  verify_error: string | null;
  created_at: number;
  updated_at: number;
  /**
   * `standard` (Standard Webhooks), or `fitbit`: the app's Fitbit-compatible subscriber, whose
   * `secret` is the app's client secret sealed (security/sealed-values.ts) and whose challenge is
   * its verification code.
   */
  format: Generated<WebhookEndpointFormat>;
  /** The id Fitbit's X-Fitbit-Subscriber-Id names; null for a standard endpoint. */
  fitbit_subscriber_id: string | null;
  /** The code a Fitbit-compatible subscriber must recognise (`GET ?verify=`); null for a standard endpoint. */
  fitbit_verification_code: string | null;
}

export type WebhookEndpointFormat = 'standard' | 'fitbit';

/** A Fitbit-compatible subscription: an app's, of one person's collection (docs/migrating-from-fitbit.md). */
export interface FitbitSubscriptionTable {
  app_id: string;
  /** Chosen by the app; unique within it. */
  subscription_id: string;
  /** The app's subscriber (a webhook endpoint of the `fitbit` format). */
  endpoint_id: string;
  user_id: string;
  /** activities, body, sleep or userRevokedAccess; '' for every collection. */
  collection: string;
  created_at: number;
}

/**
 * The events of one change for one app (docs/decisions/0042-compact-events.md): one per bit of
 * `types`, each told with its id made from `seq` (store/event-ids.ts). `txid` (PostgreSQL only) is
 * the writing transaction's id.
 */
export interface EventTable {
  seq: Generated<number>;
  /** `apps.number` of the app whose feed holds it. */
  app_number: number;
  /** The event types, as bits (db/event-rows.ts). */
  types: number;
  /** The person, as db/event-rows.ts stores an id. */
  user_id: Buffer | null;
  /** An entry per event (db/codec/event-data.ts). */
  data: Buffer;
  created_at: number;
}

export type DeliveryState = 'pending' | 'succeeded' | 'failed';

/** One message to one endpoint: an event, or several steps.updated events merged (coalesced). */
export interface WebhookDeliveryTable {
  /** The `webhook-id` of the message. */
  id: string;
  endpoint_id: string;
  /** The event it carries (the first, when later ones were merged into it). */
  event_id: string;
  type: string;
  user_id: string | null;
  /** The JSON body sent. */
  payload: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number;
  /** A process that claimed it sends it until then; after, it is due again (that process died). */
  lease_until: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  /** The first 1 KB of the receiver's last answer (UTF-8, cut at a character). */
  last_response_body: string | null;
  created_at: number;
}

/** A single-use link to set a new password (store/password-resets.ts). */
export interface PasswordResetTable {
  /** hashCredential(token): never the token itself. */
  token_hash: string;
  user_id: string;
  expires_at: number;
  created_at: number;
  used_at: number | null;
}

/** The app a deleted access token was issued to, written by a trigger (migration 017). */
export interface EndedAccessTokenTable {
  token_key: string;
  app_id: string;
  /** The token's expiry, copied; the sweeper forgets the row ENDED_TOKEN_KEPT_SECONDS after it. */
  expires_at: number;
}

/** Counters per app, UTC day and metric (store/usage.ts). */
export interface AppUsageTable {
  app_id: string;
  day: string;
  metric: string;
  count: number;
}

/** The last errors each app caused: status, error code and route, never a credential. */
export interface AppUsageErrorTable {
  id: Generated<number>;
  app_id: string;
  at: number;
  status: number;
  error: string;
  route: string;
}

export interface Database {
  users: UserTable;
  test_people: TestPersonTable;
  stride_changes: StrideChangeTable;
  takeout_imports: TakeoutImportTable;
  takeout_import_dates: TakeoutImportDateTable;
  apps: AppTable;
  pushed_authorization_requests: PushedAuthorizationRequestTable;
  registration_tokens: RegistrationTokenTable;
  grants: GrantTable;
  authorization_codes: AuthorizationCodeTable;
  device_codes: DeviceCodeTable;
  access_tokens: AccessTokenTable;
  ended_access_tokens: EndedAccessTokenTable;
  password_resets: PasswordResetTable;
  refresh_tokens: RefreshTokenTable;
  sessions: SessionTable;
  series_days: SeriesDayTable;
  sleep_sessions: SleepSessionTable;
  body_weights: BodyWeightTable;
  server_secrets: ServerSecretTable;
  webhook_endpoints: WebhookEndpointTable;
  events: EventTable;
  webhook_deliveries: WebhookDeliveryTable;
  fitbit_subscriptions: FitbitSubscriptionTable;
  app_usage: AppUsageTable;
  app_usage_errors: AppUsageErrorTable;
  dpop_proofs: DpopProofTable;
}
