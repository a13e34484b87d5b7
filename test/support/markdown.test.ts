/**
 * The code-block extractor the documentation tests run pages with: what a reader sees as one block
 * must be one block, with its text exactly as shown.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { blockAfter, codeBlocks } from './markdown.js';

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

it('finds the first block of a language after a heading, and says what is missing', () => {
  const page = `# Guide\n\n## Node\n\n\`\`\`sh\nnpm i\n\`\`\`\n\n\`\`\`js\nconsole.log(1);\n\`\`\`\n\n## Python\n\n\`\`\`python\nprint(1)\n\`\`\`\n`;
  assert.equal(blockAfter(page, '## Node', 'js').code, 'console.log(1);\n');
  assert.equal(blockAfter(page, '## Python', 'python').line, 15);
  assert.throws(() => blockAfter(page, '## Python', 'js'), /no js block after "## Python"/);
  assert.throws(() => blockAfter(page, '## Ruby', 'ruby'), /no heading "## Ruby"/);
  // A heading must be a whole line: a mention in prose is not one.
  assert.throws(() => blockAfter('See ## Node\n```js\nx\n```\n', '## Node', 'js'), /no heading/);
});
