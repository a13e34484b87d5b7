/**
 * Fastify gives every request a child logger bound to its request id. A pino child is built
 * eagerly (its bindings are serialised into a JSON fragment at once), which costs about as much as
 * the rest of the bookkeeping of a small API request — and below `info` (no access log) almost
 * no request ever writes a line. This factory hands Fastify a stand-in that builds the real child
 * the first time the request logs something, with the same bindings and options.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions as ChildOptions } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type Lines = Record<(typeof LEVELS)[number], (...args: unknown[]) => void>;

// The level methods are added to the prototype below, one loop for all seven.
interface LazyChildLogger extends Lines {}

class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  /** The real pino child, built on first use. */
  get logger(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.logger.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

for (const level of LEVELS) {
  LazyChildLogger.prototype[level] = function (this: LazyChildLogger, ...args: unknown[]) {
    (this.logger as unknown as Lines)[level](...args);
  };
}

/** Fastify's `childLoggerFactory`: the child logger of one request, built when first used. */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options);
}
