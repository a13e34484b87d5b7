/**
 * Devices waiting for their person (RFC 8628 §3.4–3.5): each holds a pending device code and polls
 * the token endpoint at its interval, as a public client (client_id, no secret — a device cannot
 * keep one, §5.6). The polls are spread evenly over the interval, so N devices polling every
 * `interval` seconds send N / interval polls a second — 10,000 every 5 s is 2,000 a second. What
 * the load measures is what they cost the server (CPU time over the run), not how fast it can go.
 *
 * The devices share a few keep-alive connections, as they would through a reverse proxy that
 * keeps its connections to the server open.
 */
import type { Client } from 'undici';
import { connection, formBody } from './browser.js';
import { percentile, type Measurement, type Workload } from './loads.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * Added to the interval between two polls of a device: the server reads its clock in whole
 * seconds, and a poll that reaches it a little late after one that was not must not be early.
 */
export const POLL_MARGIN_SECONDS = 0.1;

const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };

export interface DeviceTarget {
  origin: string;
  clientId: string;
}

async function post(client: Client, path: string, body: string): Promise<{ status: number; body: string }> {
  const response = await client.request({ path, method: 'POST', headers: FORM_HEADERS, body });
  return { status: response.statusCode, body: await response.body.text() };
}

/** `count` device authorization requests (RFC 8628 §3.1), `connections` at a time; their device codes. */
export async function startDeviceRequests(target: DeviceTarget, count: number, connections: number, scope = 'read_profile'): Promise<{ deviceCodes: string[]; interval: number }> {
  const clients = Array.from({ length: connections }, () => connection(target.origin));
  const deviceCodes: string[] = [];
  let asked = 0;
  let interval = 5;
  const body = formBody({ client_id: target.clientId, scope });
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (asked < count) {
          asked++;
          const answer = await post(client, '/oauth2/device_authorization', body);
          if (answer.status !== 200) throw new Error(`device authorization: ${answer.status} ${answer.body.slice(0, 200)}`);
          const parsed = JSON.parse(answer.body) as { device_code: string; interval?: number };
          deviceCodes.push(parsed.device_code);
          // RFC 8628 §3.2: 5 seconds when the server does not say.
          interval = parsed.interval ?? 5;
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.destroy()));
  }
  return { deviceCodes, interval };
}

/**
 * When each poll of a round is due: device i of n at offset i/n of the period, so the polls of a
 * round are spread evenly and each device's are `period` apart.
 */
export function pollOffsets(devices: number, periodMs: number): number[] {
  return Array.from({ length: devices }, (_, i) => (i * periodMs) / devices);
}

/** Devices by the time their next poll is due: a binary min-heap. */
export class DueQueue {
  readonly #due: number[] = [];
  readonly #device: number[] = [];

  get size(): number {
    return this.#due.length;
  }

  nextDue(): number | undefined {
    return this.#due[0];
  }

  push(device: number, due: number): void {
    let i = this.#due.length;
    this.#due.push(due);
    this.#device.push(device);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.#due[parent]! <= due) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** The device due first, taken out of the queue. */
  pop(): number | undefined {
    if (this.#due.length === 0) return undefined;
    const device = this.#device[0]!;
    const last = this.#due.length - 1;
    this.#swap(0, last);
    this.#due.pop();
    this.#device.pop();
    for (let i = 0; ; ) {
      const [left, right] = [2 * i + 1, 2 * i + 2];
      let least = i;
      if (left < last && this.#due[left]! < this.#due[least]!) least = left;
      if (right < last && this.#due[right]! < this.#due[least]!) least = right;
      if (least === i) break;
      this.#swap(i, least);
      i = least;
    }
    return device;
  }

  #swap(a: number, b: number): void {
    [this.#due[a], this.#due[b]] = [this.#due[b]!, this.#due[a]!];
    [this.#device[a], this.#device[b]] = [this.#device[b]!, this.#device[a]!];
  }
}

/** What a poll's answer was, to the device. */
export type PollAnswer = 'pending' | 'slow_down' | 'other';

/** RFC 8628 §3.5: a 400 whose `error` is authorization_pending or slow_down. */
export function pendingAnswer(status: number, body: string): PollAnswer {
  if (status !== 400) return 'other';
  try {
    const { error } = JSON.parse(body) as { error?: unknown };
    return error === 'authorization_pending' ? 'pending' : error === 'slow_down' ? 'slow_down' : 'other';
  } catch {
    return 'other';
  }
}

/**
 * The devices polling at `interval` (+ POLL_MARGIN_SECONDS). No one answers these requests, so
 * every answer must be authorization_pending. A device told slow_down waits 5 s longer from then
 * on, as RFC 8628 §3.5 tells it to; those answers are counted apart (the row's note), and any other
 * answer is a failure. `answer` says what a server's answer was (the bare server's reference
 * takes any 2xx as pending). The rate is polls answered a second.
 */
export function devicePollWorkload(
  target: DeviceTarget,
  deviceCodes: readonly string[],
  interval: number,
  connections: number,
  pid: number,
  answer: (status: number, body: string) => PollAnswer = pendingAnswer,
): Workload {
  const periodMs = (interval + POLL_MARGIN_SECONDS) * 1000;
  const periods = new Float64Array(deviceCodes.length).fill(periodMs);
  const bodies = deviceCodes.map((code) => formBody({ grant_type: DEVICE_CODE_GRANT, device_code: code, client_id: target.clientId }));
  // The schedule runs on its own clock, which stands still between slices: a slice takes it up
  // where the previous one stopped, so polls of a device are a period apart within a slice, and
  // never less across slices. The first round follows the offsets.
  const queue = new DueQueue();
  pollOffsets(deviceCodes.length, periodMs).forEach((offset, device) => queue.push(device, offset));
  let scheduleMs = 0;
  const clients = Array.from({ length: connections }, () => connection(target.origin));
  const latencies: number[] = [];
  const errors: string[] = [];
  let failed = 0;
  let slowDowns = 0;
  let measuredSeconds = 0;

  const poll = async (device: number, record: boolean) => {
    const sent = performance.now();
    try {
      const answered = await post(clients[device % clients.length]!, '/oauth2/token', bodies[device]!);
      const kind = answer(answered.status, answered.body);
      if (kind === 'pending') {
        if (record) latencies.push(performance.now() - sent);
        return;
      }
      if (kind === 'slow_down') {
        periods[device]! += 5000;
        if (record) slowDowns++;
        return;
      }
      failed++;
      if (errors.length < 3) errors.push(`${answered.status} ${answered.body.slice(0, 160)}`);
    } catch (error) {
      failed++;
      if (errors.length < 3) errors.push((error as Error).message);
    }
  };

  /** Sends every poll that falls due within `seconds`, then waits for the answers. */
  const run = async (seconds: number, record: boolean) => {
    const started = performance.now();
    const scheduleStart = scheduleMs;
    const scheduleEnd = scheduleStart + seconds * 1000;
    const scheduleNow = () => scheduleStart + performance.now() - started;
    const inFlight = new Set<Promise<void>>();
    for (;;) {
      const due = queue.nextDue();
      if (due === undefined || due >= scheduleEnd) {
        // A device whose answer is still to come may fall due again within the slice.
        if (inFlight.size === 0) break;
        await Promise.race(inFlight);
        continue;
      }
      const wait = due - scheduleNow();
      if (wait > 1) {
        // In steps, so that a device put back meanwhile with an earlier due time is not passed over.
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 10)));
        continue;
      }
      const device = queue.pop()!;
      const sentAt = Math.max(due, scheduleNow());
      // Back in the queue once answered: the period may have grown (slow_down).
      const pending = poll(device, record).then(() => queue.push(device, sentAt + periods[device]!));
      inFlight.add(pending);
      void pending.finally(() => inFlight.delete(pending));
    }
    scheduleMs = scheduleEnd;
    return (performance.now() - started) / 1000;
  };

  return {
    pid,
    async warmUp(seconds) {
      await run(seconds, false);
    },
    async runSlice(seconds) {
      measuredSeconds += await run(seconds, true);
    },
    result(): Omit<Measurement, 'rssMb' | 'cpu'> {
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        rate: sorted.length / measuredSeconds,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        ok: sorted.length,
        failed,
        seconds: measuredSeconds,
        ...((failed > 0 || slowDowns > 0) && {
          note: [
            ...(slowDowns > 0 ? [`${slowDowns} slow_down answer(s)`] : []),
            ...(failed > 0 ? [`${failed} poll(s) answered neither authorization_pending nor slow_down: ${errors.join(' | ')}`] : []),
          ].join('; '),
        }),
      };
    },
    close() {
      clients.forEach((client) => void client.destroy());
    },
  };
}
