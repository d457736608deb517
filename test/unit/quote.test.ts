import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { shellJoin, shellQuote } from '../../src/core/quote';

/** Words that break naive quoting: quotes, spaces, $, backticks, newlines, globs, dashes, non-ASCII. */
export function nastyWords(count: number, seed = 7): string[] {
  const pieces = ["'", '"', ' ', '$', '$(id)', '`id`', '\n', '\t', '\\', '*', '?', '[a]', '-', '--x', ';', '&', '|', '>', '<', '!', '#', '~', '{a,b}', 'é', '日本', '🙂', '%s', '=', ''];
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state;
  };
  const words = ['', ' ', "'", '-n', '-e', '--', '$HOME', '`whoami`', 'a\nb'];
  while (words.length < count) {
    const length = next() % 6;
    let word = '';
    for (let i = 0; i < length; i++) {
      word += pieces[next() % pieces.length] + (next() % 3 === 0 ? 'x' : '');
    }
    words.push(word);
  }
  return words;
}

test('plain words stay unquoted; everything else is single-quoted', () => {
  assert.equal(shellQuote('abc-1.2/x'), 'abc-1.2/x');
  assert.equal(shellQuote(''), "''");
  assert.equal(shellQuote("it's"), "'it'\\''s'");
  assert.equal(shellQuote('$(id)'), "'$(id)'");
});

test('1,000 generated words survive a real bash byte-exact', () => {
  const words = nastyWords(1000);
  const script = `printf '%s\\0' ${shellJoin(words)}`;
  const out = execFileSync('bash', ['-c', script]);
  const back = out.toString('utf8').split('\0').slice(0, -1);
  assert.deepEqual(back, words);
});
