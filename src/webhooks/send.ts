/**
 * One attempt to send a message (docs/webhooks.md): a POST signed by the Standard Webhooks
 * scheme (`webhook-id`, `webhook-timestamp`, `webhook-signature`: one `v1,…` per secret), 10 s
 * at most, no redirect followed, at most 64 KB of the answer read.
 */
import { Webhook } from 'standardwebhooks';
import type { Agent } from 'undici';
import type { ClaimedMessage } from '../store/webhooks.js';
import { publicOnlyConnector, publicOnlyLookup, targetProblem } from './targets.js';

export const TIMEOUT_MS = 10_000;
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface Answer {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** The answer's body (at most MAX_ANSWER_BYTES), for a verification's challenge. */
  body: string;
  latencyMs: number;
}

/**
 * The connections messages go out on. undici is loaded here, by the first delivery, rather than by
 * every process that starts the app (every `stride` command and test): it is a tenth of what a
 * start loads.
 */
export async function deliveryAgent(allowPrivate: boolean): Promise<Agent> {
  const { Agent, buildConnector } = await import('undici');
  return new Agent({
    connect: allowPrivate ? { timeout: TIMEOUT_MS } : publicOnlyConnector(buildConnector({ timeout: TIMEOUT_MS, lookup: publicOnlyLookup })),
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
    connections: 16,
  });
}

export function signatures(message: Pick<ClaimedMessage, 'secrets' | 'messageId'>, timestamp: Date, payload: string): string {
  return message.secrets.map((secret) => new Webhook(secret).sign(message.messageId, timestamp, payload)).join(' ');
}

export async function send(agent: Agent, message: ClaimedMessage, allowPrivate: boolean): Promise<Answer> {
  const timestamp = new Date();
  const headers = {
    'content-type': 'application/json',
    'webhook-id': message.messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatures(message, timestamp, message.payload),
  };
  return request(agent, message.url, { method: 'POST', headers, body: message.payload }, allowPrivate);
}

/**
 * One request to a target, checked by targets.ts (and every connection by the agent): a 2xx
 * answer is `ok`. Fitbit-compatible subscribers are sent to through it too (fitbit-send.ts).
 */
export async function request(agent: Agent, target: string, init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }, allowPrivate: boolean): Promise<Answer> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const problem = targetProblem(target, allowPrivate);
  if (problem) return { ok: false, status: null, error: problem, body: '', latencyMs: 0 };
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  try {
    const url = new URL(target);
    const response = await agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: init.method,
      signal,
      headers: { 'user-agent': 'Stride-Webhooks/1', ...init.headers },
      ...(init.body !== undefined && { body: init.body }),
    });
    const body = await readAtMost(response.body, MAX_ANSWER_BYTES);
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    return { ok, status: response.statusCode, error: ok ? null : `the endpoint answered ${response.statusCode}`, body, latencyMs: elapsed() };
  } catch (error) {
    const reason = signal.aborted ? `no answer within ${TIMEOUT_MS / 1000} s` : describe(error);
    return { ok: false, status: null, error: reason, body: '', latencyMs: elapsed() };
  }
}

async function readAtMost(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function describe(error: unknown): string {
  const err = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const cause = err.cause ?? err;
  return [cause.code, cause.message ?? err.message].filter(Boolean).join(': ').slice(0, 300) || 'the request failed';
}
