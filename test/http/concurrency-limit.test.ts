/**
 * The per-key limit on requests running at once (src/http/concurrency-limit.ts), on a real server:
 * a place is given back however the answer ends, and a client gone before its handler asked for
 * one takes none.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { ApiError } from '../../src/errors.js';
import { concurrencyLimit } from '../../src/http/concurrency-limit.js';

let app: FastifyInstance;
let port = 0;
/** What each request's handler got from `enter`, in order. */
const entered: boolean[] = [];
let release: () => void = () => undefined;

before(async () => {
  const limit = concurrencyLimit(2, 7, 'exports');
  app = Fastify();
  app.setErrorHandler((error: Error, _request, reply) => reply.code(error instanceof ApiError ? error.status : 500).send(error.message));
  app.get('/slow', async (request, reply) => {
    // As an export awaits its session: the client may leave meanwhile.
    if (request.query && (request.query as Record<string, string>).wait === 'gone') await new Promise((resolve) => request.raw.socket.once('close', resolve));
    const taken = limit.enter('person', reply);
    entered.push(taken);
    if (!taken) return reply;
    await new Promise<void>((resolve) => {
      const previous = release;
      release = () => {
        previous();
        resolve();
      };
    });
    return 'done';
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});
after(() => app.close());

/** A request whose client hangs up before the handler takes its place. */
function leaveEarly(): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /slow?wait=gone HTTP/1.1\r\nHost: x\r\n\r\n');
      setTimeout(() => socket.destroy(), 20);
    });
    socket.once('close', () => setTimeout(resolve, 50));
  });
}

it('takes no place for a client gone before its handler asked, so none is lost', async () => {
  for (let i = 0; i < 3; i++) await leaveEarly();
  assert.deepEqual(entered, [false, false, false]);
  const url = `http://127.0.0.1:${port}/slow`;
  const running = [fetch(url), fetch(url)];
  while (entered.length < 5) await new Promise((resolve) => setTimeout(resolve, 10));
  const third = await fetch(url);
  assert.equal(third.status, 429, 'the two places are taken by the two running requests');
  release();
  for (const answer of await Promise.all(running)) assert.equal(await answer.text(), 'done');
  const again = fetch(url);
  while (entered.length < 6) await new Promise((resolve) => setTimeout(resolve, 10));
  release();
  assert.equal((await again).status, 200, 'both places were given back');
});
