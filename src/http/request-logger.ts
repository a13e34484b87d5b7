/**
 * Fastify gives every request a child logger bound to its request id. A pino child is built
 * eagerly (its bindings are serialised into a JSON fragment at once), which costs about as much as
 * the rest of the bookkeeping of a small API request — and below `info` (no access log) almost
 * no request ever writes a line. This factory hands Fastify a stand-in that builds the real child
 * the first time the request logs something, with the same bindings and options.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions as ChildOptions } from 'pino';
type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
type Lines = Record<LevelName, (...args: unknown[]) => void>;

class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  /** The real pino child, built on first use. */
  private get logger(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  private get lines(): Lines {
    return this.logger as unknown as Lines;
  }

  get level(): string {
    return this.logger.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: unknown[]): void {
    this.lines.fatal(...args);
  }

  error(...args: unknown[]): void {
    this.lines.error(...args);
  }

  warn(...args: unknown[]): void {
    this.lines.warn(...args);
  }

  info(...args: unknown[]): void {
    this.lines.info(...args);
  }

  debug(...args: unknown[]): void {
    this.lines.debug(...args);
  }

  trace(...args: unknown[]): void {
    this.lines.trace(...args);
  }

  silent(...args: unknown[]): void {
    this.lines.silent(...args);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the child logger of one request, built when first used. */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options);
}
