/**
 * The fenced code blocks of a Markdown page (CommonMark's ``` and ~~~ fences), so that tests can run
 * a page's examples exactly as a reader copies them.
 */

export interface CodeBlock {
  /** The first word of the info string (`sh`, `js`, `text`), or '' for a bare fence. */
  lang: string;
  /** The block's text, ending with a newline. */
  code: string;
  /** 1-based line of the opening fence, for messages that point into the page. */
  line: number;
}

/** Every fenced block of `markdown`, in order; `lang` keeps only blocks of those languages. */
export function codeBlocks(markdown: string, lang?: string | string[]): CodeBlock[] {
  const wanted = lang === undefined ? null : new Set(Array.isArray(lang) ? lang : [lang]);
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    // A closing fence: the same character, at least as long, nothing after it (CommonMark §4.5).
    const close = new RegExp(`^ {0,3}${fence![0] === '`' ? '`' : '~'}{${fence!.length},}\\s*$`);
    while (j < lines.length && !close.test(lines[j]!)) {
      // Up to the opening fence's indentation is removed from each line.
      body.push(lines[j]!.replace(new RegExp(`^ {0,${indent!.length}}`), ''));
      j++;
    }
    if (wanted === null || wanted.has(info!)) blocks.push({ lang: info!, code: `${body.join('\n')}\n`, line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The first block of `lang` after the line `heading` (as written, `## …` included); throws when there is none. */
export function blockAfter(markdown: string, heading: string, lang: string): CodeBlock {
  const headingLine = markdown.split('\n').indexOf(heading) + 1;
  if (headingLine === 0) throw new Error(`no heading "${heading}"`);
  const block = codeBlocks(markdown, lang).find((candidate) => candidate.line > headingLine);
  if (!block) throw new Error(`no ${lang} block after "${heading}"`);
  return block;
}
