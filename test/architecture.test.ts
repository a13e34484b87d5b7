/**
 * The layers of src/ point one way and no import goes in a circle: the rules of
 * .dependency-cruiser.cjs, checked with dependency-cruiser's API (`npx depcruise src` prints the
 * same report). Run from the repository root, as `npm test` is.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

it('has no import cycle and no import against the layers in src/', async () => {
  const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
  const result = await cruise(['src'], options, undefined, { tsConfig: extractTSConfig('./tsconfig.json') });
  const { summary, modules } = result.output as ICruiseResult;
  const violations = summary.violations.map((v) =>
    v.rule.name === 'no-circular' ? `${v.rule.name}: ${[v.from, ...(v.cycle ?? []).map((step) => step.name)].join(' -> ')}` : `${v.rule.name}: ${v.from} -> ${v.to}`,
  );
  assert.deepEqual(violations, []);
  // The check saw the code: every module of src/ was cruised.
  assert.ok(modules.filter((module) => module.source.startsWith('src/')).length > 50);
});
