/**
 * Verifying a webhook from Stride with the `standardwebhooks` package: the signature of
 * `id.timestamp.body` under the endpoint's secret (`whsec_…`), any of the signatures Stride sends
 * while a secret rotates, and a timestamp within five minutes (docs/webhooks.md, "Delivery").
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { StrideError } from './errors.js';

/** A verified message: its `webhook-id` and its body, `{ type, timestamp, data }`. */
export interface WebhookMessage {
  /** The message's `webhook-id`, the same on every retry and redelivery of it: one already handled can be ignored. */
  id: string;
  type: string;
  /** ISO 8601, when the event was made. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** Headers as Node's `request.headers` or a fetch `Headers` has them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function plainHeaders(headers: WebhookHeaders): Record<string, string> {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  const plain: Record<string, string> = {};
  for (const [name, value] of entries) if (value !== undefined) plain[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return plain;
}

/**
 * The message, if `body` (the raw body, exactly as received: parsing and re-serialising it breaks
 * the signature) is signed by `secret`; a StrideError `invalid_signature` otherwise.
 */
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: WebhookHeaders): WebhookMessage {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const plain = plainHeaders(headers);
  try {
    const verified = new Webhook(secret).verify(text, plain) as Omit<WebhookMessage, 'id'>;
    // Signed with the body: verify() has refused a message without it.
    return { id: plain['webhook-id']!, ...verified };
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    throw new StrideError({ error: 'invalid_signature', errorDescription: error.message }, { cause: error });
  }
}
