import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DEVICE_CODE_GRANT, DueQueue, devicePollWorkload, pendingAnswer, POLL_MARGIN_SECONDS, pollOffsets, startDeviceRequests } from '../../../bench/lib/device-polls.js';
import { interleave } from '../../../bench/lib/loads.js';

describe('device polls: what an answer means to a device', () => {
  it('reads authorization_pending and slow_down, and nothing else, as waiting', () => {
    assert.equal(pendingAnswer(400, '{"error":"authorization_pending"}'), 'pending');
    assert.equal(pendingAnswer(400, '{"error":"slow_down"}'), 'slow_down');
    assert.equal(pendingAnswer(400, '{"error":"expired_token"}'), 'other');
    assert.equal(pendingAnswer(200, '{"error":"authorization_pending"}'), 'other');
    assert.equal(pendingAnswer(400, 'not json'), 'other');
  });

  it('spreads the first polls of a round evenly over the period', () => {
    assert.deepEqual(pollOffsets(4, 1000), [0, 250, 500, 750]);
  });

  it('takes devices out in the order they fall due, whatever order they were put in', () => {
    const queue = new DueQueue();
    const dues = Array.from({ length: 200 }, (_, device) => ({ device, due: (device * 7919) % 1000 }));
    for (const { device, due } of dues) queue.push(device, due);
    const expected = [...dues].sort((a, b) => a.due - b.due).map((d) => d.due);
    const taken: number[] = [];
    while (queue.size > 0) {
      const due = queue.nextDue()!;
      const device = queue.pop()!;
      assert.equal(dues[device]!.due, due);
      taken.push(due);
    }
    assert.deepEqual(taken, expected);
    assert.equal(queue.pop(), undefined);
  });
});

describe('devices polling a server', () => {
  let server: Server;
  let origin: string;
  /** Each device code's poll times (ms), as the server saw them. */
  const polls = new Map<string, number[]>();
  let issued = 0;

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (req.url === '/oauth2/device_authorization') {
          assert.equal(form.get('client_id'), 'device-app');
          assert.equal(form.has('client_secret'), false, 'a device sends no secret');
          res.end(JSON.stringify({ device_code: `dc-${issued++}`, interval: 1 }));
          return;
        }
        assert.equal(form.get('grant_type'), DEVICE_CODE_GRANT);
        const code = form.get('device_code')!;
        polls.set(code, [...(polls.get(code) ?? []), performance.now()]);
        res.statusCode = 400;
        // One device is told to slow down at its first poll, another's code is unknown.
        const error = code === 'dc-3' && polls.get(code)!.length === 1 ? 'slow_down' : code === 'dc-4' ? 'invalid_grant' : 'authorization_pending';
        res.end(JSON.stringify({ error }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('starts device requests as a public client and keeps their codes', async () => {
    const { deviceCodes, interval } = await startDeviceRequests({ origin, clientId: 'device-app' }, 40, 4);
    assert.equal(deviceCodes.length, 40);
    assert.equal(new Set(deviceCodes).size, 40);
    assert.equal(interval, 1);
  });

  it('polls each device once a period, never early across slices, and backs off after slow_down', async () => {
    const codes = Array.from({ length: 40 }, (_, i) => `dc-${i}`);
    polls.clear();
    const workload = devicePollWorkload({ origin, clientId: 'device-app' }, codes, 0.2, 4, process.pid);
    // Two slices of 0.3 s with the schedule stopped between them: 0.6 s of a 0.3 s period.
    const [m] = await interleave([workload], { connections: 4, warmupSeconds: 0, durationSeconds: 0.6 }, 0.3);
    const periodMs = (0.2 + POLL_MARGIN_SECONDS) * 1000;
    for (const [code, times] of polls) {
      for (let i = 1; i < times.length; i++) {
        // Times are of arrival: a poll held up on a busy machine shortens the gap to the next by as
        // much. An early schedule (a slice starting its devices afresh) would be a whole period early.
        assert.ok(times[i]! - times[i - 1]! >= periodMs - 100, `${code} polled ${(times[i]! - times[i - 1]!).toFixed(0)} ms after its last`);
      }
    }
    assert.equal(polls.get('dc-3')!.length, 1, 'told slow_down, the device waits 5 s more');
    assert.equal(polls.get('dc-0')!.length, 2, 'two periods, two polls');
    assert.equal(m!.failed, polls.get('dc-4')!.length, 'invalid_grant is a failure');
    assert.match(m!.note ?? '', /1 slow_down answer/);
    // Each of the other 38 devices twice, or once if the machine was so busy that its first poll
    // went out late enough to push its next past the end.
    assert.ok(m!.ok >= 60 && m!.ok <= 76, `${m!.ok} pending answers`);
    // 40 devices every 0.3 s: at most about 133 polls a second, never more than the schedule.
    assert.ok(m!.rate > 0 && m!.rate < 140, `${m!.rate} polls/s`);
  });
});
