/**
 * Sizes libuv's thread pool to one thread per core before anything starts it. This file is
 * CommonJS so that it runs before the ES module loader, which reads files on that pool and so
 * starts it with libuv's default of four threads; the size is read once, when the pool starts.
 *
 * Argon2id is the only work Stride puts on the pool (@node-rs/argon2). With one thread per core,
 * and one more hash admitted than there are threads (argon2Slots in security/passwords.ts), the
 * admitted hash that cannot start yet waits in libuv's own queue, and a thread that finishes one
 * takes the next at once — instead of sleeping until the event loop gets round to the finished
 * hash and hands over the next. An operator's own UV_THREADPOOL_SIZE is kept.
 */
import { availableParallelism } from 'node:os';

process.env.UV_THREADPOOL_SIZE ??= String(availableParallelism());
