// How an agent tool's input is shown for confirmation: truncation by code points, invisible
// characters made visible, and Markdown code that holds any text (checked against CommonMark's
// own rules: the fence is longer than every backtick run inside).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markdownCodeBlock, markdownCodeSpan, showText, urlFacts } from '../../src/core/toolMessages';

test('short text is shown whole, with its length in code points', () => {
  assert.deepEqual(showText('echo hi\n', 500), { shown: 'echo hi\n', total: 8, truncated: false });
  assert.deepEqual(showText('😀😀', 500), { shown: '😀😀', total: 2, truncated: false });
});

test('long text is cut at a code point boundary, never inside a surrogate pair', () => {
  const text = `${'a'.repeat(9)}😀tail`;
  const shown = showText(text, 10);
  assert.equal(shown.shown, `${'a'.repeat(9)}😀`);
  assert.equal(shown.total, 14);
  assert.equal(shown.truncated, true);
  assert.equal(showText('x'.repeat(10_000), 500).shown.length, 500);
});

test('characters that hide or reorder text are spelled out; newline and tab stay', () => {
  // An RLO makes "gnp.exe" read backwards; zero-width and BOM characters do not show at all.
  assert.equal(showText('photo\u202egnp.exe', 100).shown, 'photo\\u{202E}gnp.exe');
  assert.equal(showText('a\u200bb\ufeffc\u0085d', 100).shown, 'a\\u{200B}b\\u{FEFF}c\\u{0085}d');
  assert.equal(showText('line1\n\tline2', 100).shown, 'line1\n\tline2');
});

test('one-line form shows newlines and tabs as symbols', () => {
  assert.equal(showText('a\nb\r\nc\td', 100, true).shown, 'a⏎b\\u{000D}⏎c⇥d');
});

test('a code span holds backticks and never renders its content', () => {
  assert.equal(markdownCodeSpan('ctrl+c'), '`ctrl+c`');
  assert.equal(markdownCodeSpan('a`b'), '``a`b``');
  assert.equal(markdownCodeSpan('`x`'), '`` `x` ``');
  assert.equal(markdownCodeSpan('[link](http://evil) <b>'), '`[link](http://evil) <b>`');
  assert.equal(markdownCodeSpan('two\nlines'), '`two lines`');
});

test('a code block keeps newlines and outlasts any fence inside the text', () => {
  assert.equal(markdownCodeBlock('echo hi\nls'), '```text\necho hi\nls\n```');
  const inner = 'before\n````\nescape?\n````\nafter';
  const block = markdownCodeBlock(inner);
  assert.ok(block.startsWith('`````text\n'));
  assert.ok(block.endsWith('\n`````'));
  assert.equal(block.slice('`````text\n'.length, -'\n`````'.length), inner);
});

test('the URL facts a person checks: the host (as the browser resolves it) and plain http', () => {
  assert.deepEqual(urlFacts('https://example.com:8443/a?b'), { host: 'example.com:8443', insecure: false });
  assert.deepEqual(urlFacts('http://user@exämple.org/'), { host: 'xn--exmple-cua.org', insecure: true });
  // The part before @ is not the site.
  assert.equal(urlFacts('https://bank.example@evil.test/login')?.host, 'evil.test');
  assert.equal(urlFacts('not a url'), undefined);
});
