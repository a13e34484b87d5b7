#!/usr/bin/env node
// Writes dist/ from src/, test/ and bench/ the way `tsc -b` lays it out (the same paths, ES modules
// for .ts, CommonJS .cjs for .cts, a source map beside each), with esbuild: types removed, nothing
// checked. `npm test` runs this instead of tsc's emit and checks the types alongside the tests
// (scripts/test.mjs --typecheck), so that the tests start about half a minute sooner and the
// command still fails on a type error. `isolatedModules` in tsconfig.json makes tsc refuse what a
// file-by-file transpiler cannot do alone (a re-exported type without `type`, a const enum).
//   node scripts/emit.mjs [outdir]
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const OUT = process.argv[2] ?? 'dist';
const TREES = ['src', 'test', 'bench'];

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.c?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const files = TREES.flatMap(sources);
// The options tsc's emit has in tsconfig.json: ES2022, source maps; esbuild reads the class-field
// semantics from tsconfig.json as tsc does.
const common = { outdir: OUT, outbase: '.', platform: 'node', target: 'es2022', sourcemap: true, logLevel: 'error' };
await Promise.all([
  build({ ...common, entryPoints: files.filter((file) => file.endsWith('.ts')), format: 'esm' }),
  // tsc makes a .cts CommonJS; a dynamic import() in it stays one (it loads an ES module).
  build({ ...common, entryPoints: files.filter((file) => file.endsWith('.cts')), format: 'cjs', outExtension: { '.js': '.cjs' }, supported: { 'dynamic-import': true } }),
]);
