// Shell quoting against the real shells a login can have (bash, dash, zsh, mksh; Debian's
// packages, scripts/setup-sshd-deps.sh), run the way sshd runs a remote command: `SHELL -c
// COMMAND`, with COMMAND as raw bytes. Also with the options an rc file can set, and
// interactive (history expansion, read from stdin as a typed line would be).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { shellJoin, shellQuote } from '../../src/core/quote';
import { nastyWords } from '../support/fixtures';

/** Words each shell family treats specially somewhere, bare. */
const SPECIAL = [
  '=ls', '=', '==', '=bash', 'a==ls', 'a=~', 'a=~/x', 'a=b', 'A=$(id)', 'PATH=/x', 'x:~', '~', '~root', '~+', '~-',
  '{a,b}', '{1..3}', 'x{a,b}y', '{}', '!', '!!', '!$', '!-1', 'a!b', '!#', '^', '^x', '^a^b', 'x^y', '#', 'a#b', '#!',
  'x~y', 'a#', '*', '?', '[a]', '[!a]', '*(x)', '@(x)', '+(x)', '!(x)', '?(x)', '<(x)', '>(x)', '=(x)', '$', '$$', '${x}',
  '$((1))', '`id`', '$(id)', '\\', '\\n', ';', '&', '|', '&&', '<', '>', '>>', '(', ')', '%', '%1', '%%', '%?x',
  '', ' ', '\t', '\n', 'a\nb', '\n!\n', "'", "''", "'''", "a'b", "'!'", '"', '""', '-', '--', '-n', '-e', '-c',
  'é', '日本', '🙂', '\u00a0', '\u2028', '\u001b[2J', '\u0007', '\u007f', 'x'.repeat(300),
];

/** Byte strings that are not UTF-8 (a shell in a UTF-8 locale must still pass them through). */
const NON_UTF8 = [[0x80], [0xff, 0xfe], [0xc3], [0xe9, 0x27], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x27, 0xa0, 0x21], [0xf8, 0x88, 0x80, 0x80, 0x80]].map(
  (bytes) => Buffer.from(bytes),
);

/** A word as bytes: UTF-8 text, or (for the non-UTF-8 ones) one char per byte, latin1. */
interface Word {
  readonly text: string;
  readonly encoding: 'utf8' | 'latin1';
}

const WORDS: Word[] = [
  ...SPECIAL.map((text) => ({ text, encoding: 'utf8' as const })),
  ...NON_UTF8.map((bytes) => ({ text: bytes.toString('latin1'), encoding: 'latin1' as const })),
  ...nastyWords(1000).map((text) => ({ text, encoding: 'utf8' as const })),
];

/**
 * What a person could type at an interactive prompt: control characters (tab, escape, DEL)
 * and bytes that are not UTF-8 are line-editing keys there, not text.
 */
// eslint-disable-next-line no-control-regex
const TYPABLE = WORDS.filter((w) => w.encoding === 'utf8' && !/[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028]/.test(w.text));

function bytesOf(word: Word): Buffer {
  return Buffer.from(word.text, word.encoding);
}

/** `printf '%s\0' WORD...` as raw bytes, each word quoted as text, then encoded as itself. */
function printfScript(words: readonly Word[]): Buffer {
  return Buffer.concat([
    Buffer.from("printf '%s\\0'"),
    ...words.map((w) => Buffer.concat([Buffer.from(' '), Buffer.from(shellQuote(w.text), w.encoding)])),
    Buffer.from('\n'),
  ]);
}

function nulJoined(words: readonly Word[]): Buffer {
  return Buffer.concat(words.flatMap((w) => [bytesOf(w), Buffer.from([0])]));
}

const empty = mkdtempSync(join(tmpdir(), 'botscreen-quote-home-'));
after(() => rmSync(empty, { recursive: true, force: true }));

/** A clean environment with a UTF-8 locale and a home without rc files. */
const ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: empty, ZDOTDIR: empty, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };

/** Puts stdin's bytes, unchanged, in argv: `SHELL [options] -c BYTES`. */
const EXEC_DASH_C = 'import os,sys\nos.execvp(sys.argv[1], sys.argv[1:] + ["-c", sys.stdin.buffer.read()])';

/** Runs `shell [options] -c SCRIPT` with SCRIPT passed as raw bytes (as sshd's execve does). */
function viaDashC(shell: string, options: readonly string[], script: Buffer): Buffer {
  return execFileSync('python3', ['-c', EXEC_DASH_C, shell, ...options], { input: script, env: ENV, cwd: empty, maxBuffer: 64 << 20, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Runs an interactive shell reading SCRIPT as typed lines from stdin (history expansion on). */
function interactive(shell: string, options: readonly string[], script: Buffer): Buffer {
  const result = spawnSync(shell, [...options, '-i', '-s'], { input: Buffer.concat([script, Buffer.from('exit\n')]), env: ENV, cwd: empty, maxBuffer: 64 << 20 });
  assert.equal(result.status, 0, `${shell} -i failed: ${result.stderr.toString().slice(-500)}`);
  return result.stdout;
}

const SHELLS: Array<[string, string, readonly string[]]> = [
  ['bash', 'bash', []],
  ['bash --posix', 'bash', ['--posix']],
  ['dash', 'dash', []],
  ['zsh', 'zsh', []],
  ['zsh as sh', 'zsh', ['--emulate', 'sh']],
  ['zsh with rc-file options', 'zsh', ['-o', 'magicequalsubst', '-o', 'extendedglob', '-o', 'rcquotes', '-o', 'globsubst', '-o', 'braceccl', '-o', 'kshglob']],
  ['mksh', 'mksh', []],
  ['mksh -o posix', 'mksh', ['-o', 'posix']],
];

describe('shell quoting', () => {
  test('plain words stay bare; everything else is single-quoted', () => {
    assert.equal(shellQuote('abc-1.2/x'), 'abc-1.2/x');
    assert.equal(shellQuote('user@host:/a,b+c'), 'user@host:/a,b+c');
    assert.equal(shellQuote(''), "''");
    assert.equal(shellQuote("it's"), "'it'\\''s'");
    assert.equal(shellQuote('$(id)'), "'$(id)'");
    assert.equal(shellQuote('=ls'), "'=ls'", 'zsh expands a leading =');
    assert.equal(shellQuote('A=b'), "'A=b'", 'an assignment in command position');
    assert.equal(shellQuote('%1'), "'%1'");
    assert.throws(() => shellQuote('a\0b'), /NUL/);
  });

  test(`${WORDS.length} words (each special to some shell, non-UTF-8 bytes, 1,000 generated) are among what is checked`, () => {
    assert.ok(WORDS.length >= 1000 + SPECIAL.length);
    assert.ok(WORDS.some((w) => w.text.startsWith('=')) && WORDS.some((w) => w.encoding === 'latin1'));
  });

  for (const [name, shell, options] of SHELLS) {
    test(`every word survives \`${name} -c\` byte-exact`, () => {
      const out = viaDashC(shell, options, printfScript(WORDS));
      assert.ok(out.equals(nulJoined(WORDS)), `${name}: the words differ`);
    });

    test(`a quoted NAME=value in command position is a program name to ${name}, not an assignment`, () => {
      const script = Buffer.from(`${shellJoin(['BOTSCREEN_Q=1', 'true'])}; printf '%s' "\${BOTSCREEN_Q-unset}"\n`);
      const result = spawnSync('python3', ['-c', EXEC_DASH_C, shell, ...options], {
        input: script,
        env: ENV,
        cwd: empty,
      });
      assert.equal(result.stdout.toString(), 'unset', `${name}: ${result.stderr.toString()}`);
      assert.match(result.stderr.toString(), /not found|No such file/, 'it tried to run a program of that name');
    });
  }

  for (const [name, shell, options] of [
    ['interactive bash', 'bash', ['--norc', '--noprofile']],
    ['interactive zsh', 'zsh', ['-f']],
    ['interactive mksh', 'mksh', []],
    ['interactive dash', 'dash', []],
  ] as const) {
    test(`every word that can be typed survives ${name} (history expansion on) byte-exact`, () => {
      const out = interactive(shell, options, printfScript(TYPABLE));
      assert.ok(out.equals(nulJoined(TYPABLE)), `${name}: the words differ`);
    });
  }
});
