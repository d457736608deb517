import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { shellJoin, shellQuote } from '../../src/core/quote';
import { nastyWords } from '../support/fixtures';

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
