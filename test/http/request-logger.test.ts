import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { lazyChildLogger } from '../../src/http/request-logger.js';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)));
      callback();
    },
  });
  const logger = pino({ level }, stream);
  // The logger Fastify would pass, counting the children built from it.
  let children = 0;
  const parent = Object.create(logger) as typeof logger;
  parent.child = ((...args: Parameters<typeof logger.child>) => {
    children++;
    return logger.child(...args);
  }) as typeof logger.child;
  return { parent, lines, children: () => children };
}

describe('request loggers', () => {
  it('build no pino child until the request logs, then log with the request id', () => {
    const { parent, lines, children } = capture('warn');
    const log = lazyChildLogger(parent, { reqId: 'req-1' }, {});
    assert.equal(children(), 0, 'a request that writes nothing costs no child');
    log.info('below the level');
    log.warn({ detail: 1 }, 'something odd');
    log.error('failed %s', 'here');
    assert.equal(children(), 1, 'one child, built on first use and kept');
    assert.deepEqual(lines.map((line) => [line.reqId, line.msg, line.level]), [['req-1', 'something odd', 40], ['req-1', 'failed here', 50]]);
    assert.equal(lines[0]!.detail, 1);
  });

  it('pass the options and the level on to the real child', () => {
    const { parent, lines } = capture('info');
    const log = lazyChildLogger(parent, { reqId: 'req-2' }, { level: 'error' });
    log.warn('filtered by the child level');
    assert.equal(log.level, 'error');
    log.level = 'debug';
    log.debug('now visible');
    const nested = log.child({ step: 'inner' });
    nested.info('nested');
    assert.deepEqual(lines.map((line) => [line.reqId, line.msg, line.step]), [['req-2', 'now visible', undefined], ['req-2', 'nested', 'inner']]);
  });
});
