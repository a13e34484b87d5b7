/**
 * A real HTTP receiver for webhook tests: records every message, verifies its signature with the
 * `standardwebhooks` package (as an app would), echoes verification challenges, and can be told
 * to fail.
 */
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  headers: Record<string, string>;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, any> };
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answer the next `n` messages (verifications included) with 500. */
  failNext(n: number): void;
  /** Whether `message` verifies with `secret` (throws nothing). */
  verifies(message: Received, secret: string): boolean;
  /** Resolves once `count` messages of `type` arrived. */
  waitFor(type: string, count?: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let failures = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      const payload = JSON.parse(body);
      if (failures > 0) {
        failures--;
        response.writeHead(500).end('failing on purpose');
        return;
      }
      received.push({ id: headers['webhook-id']!, headers, body, payload });
      const challenge = payload.type === 'webhook.verification' ? payload.data.challenge : undefined;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(challenge === undefined ? { ok: true } : { challenge }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    failNext(n) {
      failures = n;
    },
    verifies(message, secret) {
      try {
        new Webhook(secret).verify(message.body, message.headers);
        return true;
      } catch {
        return false;
      }
    },
    async waitFor(type, count = 1, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = received.filter((message) => message.payload.type === type);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) throw new Error(`waited for ${count} ${type}, got ${matching.length} (${received.map((m) => m.payload.type).join(', ')})`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
