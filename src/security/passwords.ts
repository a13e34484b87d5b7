/**
 * Password hashing with Argon2id at the OWASP Password Storage Cheat Sheet parameters
 * (m = 19 MiB, t = 2, p = 1). @node-rs/argon2 runs on the libuv thread pool, off the event loop.
 *
 * One hash or verification per core runs at a time: each holds its 19 MiB while it runs, and more
 * of them at once than there are cores only share the same CPUs, finishing no sooner while the
 * process's memory grows with the queue (a burst of sign-ins would otherwise hold one buffer per
 * waiting request). One more than that is admitted: `stride` sizes libuv's pool to the cores
 * (thread-pool.cts), so the extra one waits in libuv's queue, holding no memory yet, and the thread
 * that finishes a hash starts it at once. The others wait their turn here, in order. (Where the
 * pool is larger — an operator's UV_THREADPOOL_SIZE — all admitted ones run: one per core plus one.)
 */
import { availableParallelism } from 'node:os';
import { hash, verify, type Algorithm } from '@node-rs/argon2';

export const ARGON2_OPTIONS = {
  // The package declares Algorithm as an ambient const enum, whose members a file compiled on its
  // own cannot read (isolatedModules): its value, which the type holds to Argon2id.
  algorithm: 2 satisfies Algorithm.Argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const;

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/** A counting semaphore: `run` starts `task` once fewer than `limit` tasks are running. */
export class Semaphore {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `running` never exceeds the limit.
      if (next) next();
      else this.running--;
    }
  }
}

/** Argon2id work admitted at once: one per core running, one queued on libuv's pool behind them. */
export const argon2Slots = new Semaphore(availableParallelism() + 1);

export function hashPassword(password: string): Promise<string> {
  return argon2Slots.run(() => hash(password, ARGON2_OPTIONS));
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await argon2Slots.run(() => verify(passwordHash, password));
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same time as a real verification, so a login for an unknown email cannot be told
 * apart from a wrong password by its timing.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('stride-dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
  return false;
}
