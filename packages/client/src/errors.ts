/**
 * The one error the client throws for an answer Stride refused: the `error` and
 * `error_description` of Stride's error body (RFC 6749 §5.2 at the token endpoint, RFC 6750 §3 at
 * the resource API), the HTTP status, and `Retry-After` in seconds.
 */
import type { components } from './generated/api.js';
import type { Answer } from './transport.js';

/** The error codes Stride's API documents (the `error` of its error body). */
export type StrideErrorCode = components['schemas']['Error']['error'];

export interface StrideErrorFields {
  /** `invalid_token`, `invalid_grant`, `rate_limited`, …; any string an OAuth server may send. */
  error: StrideErrorCode | (string & {});
  errorDescription?: string | undefined;
  /** The HTTP status; undefined for an error sent back in the redirect to the app (RFC 6749 §4.1.2.1). */
  status?: number | undefined;
  /** Seconds to wait before trying again (429, 503). */
  retryAfter?: number | undefined;
  /** On a 500: the id to give Stride's operator. */
  requestId?: string | undefined;
}

export class StrideError extends Error {
  readonly error: string;
  readonly errorDescription: string | undefined;
  readonly status: number | undefined;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(fields: StrideErrorFields, options?: { cause?: unknown }) {
    super(fields.errorDescription ? `${fields.error}: ${fields.errorDescription}` : fields.error, options);
    this.name = 'StrideError';
    this.error = fields.error;
    this.errorDescription = fields.errorDescription;
    this.status = fields.status;
    this.retryAfter = fields.retryAfter;
    this.requestId = fields.requestId;
  }
}

/**
 * `Retry-After` in seconds: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when absent
 * or unreadable.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // An HTTP-date names its day and month (`Thu, 26 Nov 2026 06:01:30 GMT`); Date.parse alone would
  // also take a bare number such as "-5" for a year.
  const date = /[a-z]{3}/i.test(trimmed) ? Date.parse(trimmed) : NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The error body of an answer, parsed; undefined when it is not JSON. */
export async function answerBody(answer: Answer): Promise<unknown> {
  const text = await answer.text().catch(() => '');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The StrideError of a refused answer. The body is read (it is Stride's JSON error body, or what a
 * proxy in front sent); a body that is not that shape still gives an error named after the status.
 */
export async function errorFromAnswer(answer: Answer): Promise<StrideError> {
  const parsed = await answerBody(answer);
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  return new StrideError({
    error: typeof fields.error === 'string' ? fields.error : `http_${answer.status}`,
    errorDescription: typeof fields.error_description === 'string' ? fields.error_description : undefined,
    status: answer.status,
    retryAfter: retryAfterSeconds(answer.header('retry-after')),
    requestId: typeof fields.request_id === 'string' ? fields.request_id : undefined,
  });
}
