/**
 * @stride/client — a typed client for Stride (README.md beside this package). The types of every
 * path, parameter and body are generated from Stride's /openapi.json at build time.
 */
export { createStride, type CallbackCheck, type PersonOptions, type Stride, type StrideOptions } from './stride.js';
export { StrideError, retryAfterSeconds, type StrideErrorCode, type StrideErrorFields } from './errors.js';
export type { AuthorizationOptions, AuthorizationRequest } from './oauth.js';
export type { PersonClient } from './person.js';
export type { RetryOptions } from './retries.js';
export type { OnTokens, Tokens } from './tokens.js';
export type { SuccessBody, TypedCall, TypedCalls } from './typed-calls.js';
export type { FeedEvent, FeedOptions, FeedPageOf } from './events.js';
export { verifyWebhook, type WebhookHeaders, type WebhookMessage } from './webhooks.js';
export type { components, paths } from './generated/api.js';
