/**
 * The delivery worker every server process runs (docs/webhooks.md): claims due messages, sends
 * them, and records each attempt — success, or the next try on a schedule that starts quick and
 * stretches to a day, for WEBHOOK_RETRY_FOR after the message was made.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import type { Agent } from 'undici';
import type { ClaimedMessage } from '../store/webhooks.js';
import { sendToSubscriber } from './fitbit-send.js';
import { deliveryAgent, send, TIMEOUT_MS, type Answer } from './send.js';

/** Seconds before the next try after the 1st, 2nd, … failed attempt (then a day each). */
const RETRY_DELAYS = [5, 30, 120, 600, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400];
/** A claim outlives the slowest attempt; after it, a message whose process died is due again. */
const LEASE_SECONDS = 2 * (TIMEOUT_MS / 1000) + 10;
const BATCH = 100;

export function retryDelay(failedAttempts: number, random = Math.random): number {
  const base = RETRY_DELAYS[Math.min(failedAttempts, RETRY_DELAYS.length) - 1]!;
  // ±20 % jitter, so that endpoints that failed together are not retried together.
  return Math.round(base * (0.8 + 0.4 * random()));
}

export interface DeliveryWorker {
  /** Claims and sends one batch; returns how many messages it sent. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/** How much of a receiver's answer a delivery keeps, for its page (docs/webhooks.md). */
export const RESPONSE_BODY_KEPT_BYTES = 1024;

/** The longest start of `text` of at most `limit` UTF-8 bytes, never cutting a character. */
export function firstBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  let end = limit;
  // A continuation byte (10xxxxxx) belongs to the character before: cut before that character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

export function createDeliveryWorker(ctx: AppContext, log: FastifyBaseLogger): DeliveryWorker {
  const { allowPrivate, retryForSeconds } = ctx.config.webhooks;
  let agent: Promise<Agent> | undefined;
  const attempt = async (message: ClaimedMessage) => {
    const connections = await (agent ??= deliveryAgent(allowPrivate));
    // A Fitbit-compatible subscriber is verified and written to as Fitbit does (fitbit-send.ts).
    const answer = message.format === 'fitbit' ? await sendToSubscriber(ctx, connections, message) : await send(connections, message, allowPrivate);
    const ok = answer.ok && (message.kind === 'delivery' || message.format === 'fitbit' || echoesChallenge(answer, message.challenge));
    const error = ok ? null : (answer.error ?? 'the answer did not echo the challenge as {"challenge": "…"}');
    const at = ctx.clock();
    const retryAt = ok ? null : at + retryDelay(message.attempts + 1);
    await ctx.stores.webhooks.finish(message, { ok, status: answer.status, error, latencyMs: answer.latencyMs, responseBody: firstBytes(answer.body, RESPONSE_BODY_KEPT_BYTES), at, retryAt }, retryForSeconds);
    ctx.metrics.webhookAttempts.inc({ outcome: ok ? 'succeeded' : 'failed' });
    if (!ok) log.info({ endpoint: message.endpointId, kind: message.kind, status: answer.status, error }, 'webhook attempt failed');
  };
  return {
    async runOnce() {
      const claimed = await ctx.stores.webhooks.claim(ctx.clock(), LEASE_SECONDS, BATCH);
      await Promise.all(claimed.map(attempt));
      return claimed.length;
    },
    stop: async () => {
      await (await agent)?.close();
    },
  };
}

function echoesChallenge(answer: Answer, challenge: string | null): boolean {
  try {
    return challenge !== null && (JSON.parse(answer.body) as { challenge?: unknown }).challenge === challenge;
  } catch {
    return false;
  }
}

/** Runs the worker every `intervalMs`, and at once again after a full batch, until stopped. */
export function startDeliveryLoop(worker: DeliveryWorker, log: FastifyBaseLogger, intervalMs = 1000): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = worker.runOnce().then(
      (sent) => schedule(sent >= BATCH ? 0 : intervalMs),
      (error: unknown) => {
        log.warn({ err: error }, 'webhook delivery worker failed; trying again');
        schedule(intervalMs * 5);
      },
    );
  };
  const schedule = (ms: number) => {
    if (!stopped) timer = setTimeout(tick, ms).unref();
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await worker.stop();
    },
  };
}
