/**
 * The one error shape: `{"error", "error_description"}` with one status per code
 * (ERROR_STATUS). Anything thrown that is not an ApiError becomes a 500 `server_error` whose details stay
 * in the log — except a database that cannot be reached or written for now, which is a 503
 * `temporarily_unavailable` (docs/operations.md, "When a dependency goes away").
 */

/** The protection space named in every WWW-Authenticate challenge (RFC 7235 §2.2): Basic for clients, Bearer for the API. */
export const REALM = 'stride';

export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_grant: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  unsupported_token_type: 400,
  invalid_scope: 400,
  unauthorized_client: 400,
  access_denied: 400,
  // RFC 8628 §3.5, the device grant's polling answers.
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  // RFC 9449 §7.1 and §8: 400 at the token endpoint; the resource API answers them with 401 (status given).
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  invalid_client: 401,
  // RFC 7591 §3.2.2.
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  not_found: 404,
  conflict: 409,
  request_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  server_error: 500,
  temporarily_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The codes that have a second status: RFC 9449 §7.1 and §9 answer them 401 at a resource server. */
export const SECOND_STATUS: Partial<Record<ErrorCode, number>> = { invalid_dpop_proof: 401, use_dpop_nonce: 401 };

export class ApiError extends Error {
  readonly status: number;
  /** Extra response headers, e.g. WWW-Authenticate or Retry-After. */
  readonly headers: Record<string, string>;

  constructor(
    readonly error: ErrorCode,
    readonly description: string,
    headers: Record<string, string> = {},
    /** Only where a code has a second status (SECOND_STATUS): the DPoP errors at the resource API. */
    status?: number,
  ) {
    super(description);
    this.status = status ?? ERROR_STATUS[error];
    this.headers = headers;
  }

  /** Only client errors carry their description to the response (oidc-provider's `expose`). */
  get expose(): boolean {
    return this.status < 500;
  }

  toJSON(): { error: ErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

export const invalidRequest = (description: string) => new ApiError('invalid_request', description);
export const notFound = (description = 'no such endpoint') => new ApiError('not_found', description);

/** How long a client is asked to wait (Retry-After, RFC 9110 §10.2.3) while the database is away. */
export const RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After: the request may succeed as it is once the database is back. */
export const temporarilyUnavailable = (description: string) =>
  new ApiError('temporarily_unavailable', description, { 'retry-after': String(RETRY_AFTER_SECONDS) });
