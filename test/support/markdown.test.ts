/**
 * The code-block extractor the documentation tests run pages with: what a reader sees as one block
 * must be one block, with its text exactly as shown.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { codeBlocks } from './markdown.js';

const PAGE = [
  '# Title',
  '',
  '```sh',
  'echo one',
  '',
  'echo two',
  '```',
  'Between: `inline` is no block.',
  '````md',
  'A fence inside a longer fence:',
  '```js',
  'not a block of its own',
  '```',
  '````',
  '1. A list item:',
  '',
  '   ```sh',
  '   curl -s http://localhost:3000/healthz',
  '     --indented-more',
  '   ```',
  '~~~',
  'tilde fence, no language',
  '~~~',
].join('\n');

it('finds every fenced block in order, with its language, text and line', () => {
  assert.deepEqual(codeBlocks(PAGE), [
    { lang: 'sh', code: 'echo one\n\necho two\n', line: 3 },
    { lang: 'md', code: 'A fence inside a longer fence:\n```js\nnot a block of its own\n```\n', line: 9 },
    { lang: 'sh', code: 'curl -s http://localhost:3000/healthz\n  --indented-more\n', line: 17 },
    { lang: '', code: 'tilde fence, no language\n', line: 21 },
  ]);
});

it('keeps only the languages asked for', () => {
  assert.deepEqual(codeBlocks(PAGE, 'sh').map((block) => block.line), [3, 17]);
  assert.deepEqual(codeBlocks(PAGE, ['md', 'sh']).map((block) => block.line), [3, 9, 17]);
  assert.deepEqual(codeBlocks(PAGE, 'js'), []);
});

it('runs an unclosed fence to the end of the page, as CommonMark does', () => {
  assert.deepEqual(codeBlocks('text\n```sh\necho unclosed'), [{ lang: 'sh', code: 'echo unclosed\n', line: 2 }]);
});
