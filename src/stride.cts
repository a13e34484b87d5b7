#!/usr/bin/env node
/**
 * The `stride` command as installed and as `npm start` runs it: sets how far V8's heap may grow,
 * sizes the thread pool (thread-pool.cts), then runs the command line (cli.ts).
 */
import { setFlagsFromString } from 'node:v8';

// V8 lets the old generation grow to up to four times what survived its last full collection
// before the next: under load that was 100 MB of garbage held, over the 250 MB a process is held
// to (docs/performance.md, "V8's heap growth"). One and a half times keeps it near 170 MB at
// the same speed. Set before anything is allocated; it applies however the process was started.
setFlagsFromString('--heap-growing-percent=50');

import './thread-pool.cjs';

void import('./cli.js').then((cli) => cli.runStrideProcess());
