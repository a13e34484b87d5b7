#!/usr/bin/env node
/**
 * The `stride` command as installed and as `npm start` runs it: sizes the thread pool first
 * (thread-pool.cts), then runs the command line (cli.ts).
 */
import './thread-pool.cjs';

void import('./cli.js').then((cli) => cli.runStrideProcess());
