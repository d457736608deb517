import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { parseAction, type ActionKind } from '../../src/core/actions/catalog';
import { openBrowserArgv, openUrlArgv } from '../../src/core/actions/chromium';
import { ActionInputError, MAX_TEXT_LENGTH } from '../../src/core/actions/input';
import { normalizeChord } from '../../src/core/actions/keys';
import { parseScreenshotOutput, pngSize } from '../../src/core/actions/screenshot';
import { withEnv } from '../../src/core/actions/sessionExec';
import { clickArgv, dragArgv, keyArgv, moveArgv, scrollArgv, typeArgv, typeChunks } from '../../src/core/actions/xdotool';

const SCREEN = { width: 1280, height: 800 };

function rejects(kind: ActionKind, input: unknown, pattern: RegExp): void {
  assert.throws(() => parseAction(kind, input), (err: unknown) => err instanceof ActionInputError && pattern.test(err.message), `${kind} ${JSON.stringify(input)}`);
}

describe('agent action input', () => {
  test('coordinates must be non-negative whole numbers', () => {
    rejects('click', { x: -1, y: 5 }, /x must not be negative, got -1/);
    rejects('click', { x: Number.NaN, y: 5 }, /x must be a number of screen pixels, got NaN/);
    rejects('click', { x: 1.5, y: 5 }, /x must be a whole number/);
    rejects('click', { x: '10', y: 5 }, /x must be a number .* got "10"/);
    rejects('click', { x: 10 }, /y is required/);
    rejects('click', { x: Infinity, y: 1 }, /whole number/);
    rejects('drag', { from: { x: 1, y: 1 }, to: { x: -3, y: 1 } }, /to\.x must not be negative/);
    rejects('drag', { from: { x: 1, y: 1 } }, /to must be an object/);
    rejects('scroll', { x: 1, y: 1, direction: 'sideways' }, /direction must be "up", "down", "left" or "right"/);
    rejects('scroll', { x: 1, y: 1, direction: 'up', amount: 0 }, /amount must be a whole number of scroll steps from 1 to 50/);
    rejects('click', { x: 1, y: 1, button: 'fourth' }, /button must be "left", "middle" or "right"/);
    rejects('click', { x: 1, y: 1, double: 'yes' }, /double must be true or false/);
  });

  test('unknown fields are refused rather than ignored', () => {
    rejects('click', { x: 1, y: 1, modifiers: ['ctrl'] }, /unknown field "modifiers" \(allowed: x, y, button, double\)/);
    rejects('screenshot', { region: 1 }, /this tool takes no input/);
    assert.deepEqual(parseAction('screenshot', undefined), { kind: 'screenshot' });
  });

  test('coordinates are checked against the screen size before any argv exists', () => {
    const click = parseAction('click', { x: 1280, y: 10 });
    assert.throws(() => clickArgv(click, SCREEN), /\(1280, 10\) is outside the 1280x800 screen: x must be 0 to 1279 and y 0 to 799/);
    assert.throws(() => moveArgv(parseAction('move', { x: 0, y: 800 }), SCREEN), /outside/);
    assert.throws(() => dragArgv(parseAction('drag', { from: { x: 0, y: 0 }, to: { x: 5000, y: 1 } }), SCREEN), /to \(5000, 1\) is outside/);
    assert.deepEqual(clickArgv(parseAction('click', { x: 1279, y: 799 }), SCREEN), ['xdotool', 'mousemove', '1279', '799', 'click', '1']);
    assert.deepEqual(clickArgv(parseAction('click', { x: 3, y: 4, button: 'right', double: true }), SCREEN), [
      'xdotool', 'mousemove', '3', '4', 'click', '--repeat', '2', '--delay', '80', '3',
    ]);
    assert.deepEqual(scrollArgv(parseAction('scroll', { x: 3, y: 4, direction: 'down', amount: 2 }), SCREEN), [
      'xdotool', 'mousemove', '3', '4', 'click', '--repeat', '2', '--delay', '40', '5',
    ]);
    const drag = dragArgv(parseAction('drag', { from: { x: 10, y: 20 }, to: { x: 30, y: 40 } }), SCREEN);
    assert.deepEqual(drag.slice(0, 5), ['xdotool', 'mousemove', '10', '20', 'mousedown']);
    assert.deepEqual(drag.slice(-2), ['mouseup', '1']);
  });

  test('text: length cap, no control characters, passed as one argv word after --', () => {
    rejects('type', { text: 'x'.repeat(MAX_TEXT_LENGTH + 1) }, /10001 characters long; at most 10000/);
    rejects('type', { text: '' }, /empty/);
    rejects('type', { text: 'a\u0000b' }, /control character U\+0000/);
    rejects('type', { text: 'a\u001bb' }, /U\+001B/);
    rejects('type', { text: 5 }, /text must be a string/);
    const text = '-n $(rm -rf ~) `id` "; echo \'x\' | tee /etc/passwd\nline2\ttab';
    assert.deepEqual(parseAction('type', { text }), { kind: 'type', text });
    assert.deepEqual(typeArgv(text), ['xdotool', 'type', '--delay', '12', '--', text]);
  });

  test('typed text is cut into chunks on code points, never inside a surrogate pair', () => {
    const text = '😀'.repeat(250) + 'abc';
    const chunks = typeChunks(text, 200);
    assert.equal(chunks.join(''), text);
    assert.deepEqual(chunks.map((c) => Array.from(c).length), [200, 53]);
    assert.ok(chunks.every((c) => !/[\ud800-\udbff]$/.test(c)));
  });

  test('key chords: allowlisted names, aliases, one chord', () => {
    assert.equal(normalizeChord('ctrl+shift+t'), 'ctrl+shift+t');
    assert.equal(normalizeChord('Control+Alt+Delete'), 'ctrl+alt+Delete');
    assert.equal(normalizeChord('enter'), 'Return');
    assert.equal(normalizeChord('CMD+c'), 'super+c');
    assert.equal(normalizeChord('alt+F4'), 'alt+F4');
    assert.equal(normalizeChord('ctrl++'), 'ctrl+plus');
    assert.equal(normalizeChord('ctrl+/'), 'ctrl+slash');
    assert.equal(normalizeChord('super'), 'super');
    assert.equal(normalizeChord('page_down'), 'Next');
    assert.equal(normalizeChord('KP_Enter'), 'KP_Enter');
    rejects('key', { chord: 'nosuchkey' }, /unknown key name "nosuchkey"/);
    rejects('key', { chord: 'ctrl+foo' }, /unknown key name "foo"/);
    rejects('key', { chord: 'a+b' }, /"a" in "a\+b" is not a modifier/);
    rejects('key', { chord: 'ctrl+ctrl+c' }, /repeats a modifier/);
    rejects('key', { chord: 'ctrl+c ctrl+v' }, /contains spaces/);
    rejects('key', { chord: 'ctrl+' }, /empty key name/);
    rejects('key', { chord: '' }, /non-empty string/);
    rejects('key', { chord: '$(reboot)' }, /unknown key name/);
    assert.deepEqual(keyArgv('ctrl+c'), ['xdotool', 'key', '--', 'ctrl+c']);
  });

  test('key chords: names inherited from Object.prototype are unknown keys, never xdotool words', () => {
    const inherited = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', 'toLocaleString', 'propertyIsEnumerable'];
    for (const name of inherited) {
      for (const chord of [name, `ctrl+${name}`, `${name}+a`, `${name}+${name}+a`, name.toUpperCase()]) {
        assert.throws(
          () => normalizeChord(chord),
          (err: unknown) => err instanceof ActionInputError && /unknown key name|is not a modifier/.test(err.message),
          `chord ${JSON.stringify(chord)} must be refused`,
        );
        rejects('key', { chord }, /unknown key name|is not a modifier/);
      }
    }
    // The same lookups still find real names of every kind: modifiers, aliases, keysyms, punctuation.
    assert.equal(normalizeChord('meta+ESC'), 'super+Escape');
    assert.equal(normalizeChord('ctrl+asciitilde'), 'ctrl+asciitilde');
    assert.equal(normalizeChord('shift+~'), 'shift+asciitilde');
    assert.equal(normalizeChord('XF86AudioMute'), 'XF86AudioMute');
  });

  test('URLs: http and https only, normalised, passed as a positional parameter', () => {
    rejects('openUrl', { url: 'javascript:alert(1)' }, /only http and https URLs can be opened, not javascript/);
    rejects('openUrl', { url: 'file:///etc/passwd' }, /not file/);
    rejects('openUrl', { url: 'chrome://settings' }, /not chrome/);
    rejects('openUrl', { url: 'example.com' }, /not an absolute URL/);
    rejects('openUrl', { url: `https://e.com/${'a'.repeat(9000)}` }, /at most 8192/);
    const parsed = parseAction('openUrl', { url: 'https://example.com/a b?q=$(id)' });
    assert.deepEqual(parsed, { kind: 'openUrl', url: 'https://example.com/a%20b?q=$(id)' });
    const argv = openUrlArgv('https://example.com/a%20b?q=$(id)');
    assert.equal(argv[0], 'sh');
    assert.equal(argv[1], '-c');
    assert.equal(argv.at(-1), 'https://example.com/a%20b?q=$(id)');
    // The URL is a positional parameter ("$@" after the script's name), never script text.
    assert.match(argv[2], /"\$@"/);
    assert.doesNotMatch(argv[2], /example/);
    assert.deepEqual(openBrowserArgv().slice(-1), ['botscreen-open-url'], 'no URL: just the browser');
  });

  test('the open-url script hands the URL to the browser verbatim (no shell expansion)', () => {
    // Run the real script with a stand-in "setsid" that prints its argv.
    const url = 'https://example.com/?q=$(touch%20/tmp/x)&a=`id`;b';
    const [, , script, name] = openUrlArgv(url);
    const home = mkdtempSync(join(tmpdir(), 'botscreen-openurl-'));
    mkdirSync(join(home, 'bin'));
    writeFileSync(join(home, 'bin', 'setsid'), '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$HOME/argv"\n', { mode: 0o755 });
    const bin = join(home, 'bin');
    const result = spawnSync('sh', ['-c', script, name, url], { env: { HOME: home, PATH: `${bin}:/usr/bin:/bin` }, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const argv = readFileSync(join(home, 'argv'), 'utf8').trim().split('\n');
    assert.equal(argv.at(-1), url);
    assert.ok(argv.includes(`--user-data-dir=${home}/.config/botscreen-browser`));
    assert.ok(argv.includes('--no-sandbox') && argv.includes('--disable-dev-shm-usage'));
    rmSync(home, { recursive: true, force: true });
  });

  test('wait is capped', () => {
    rejects('wait', { seconds: 0 }, /greater than 0 and at most 30/);
    rejects('wait', { seconds: 31 }, /at most 30/);
    rejects('wait', { seconds: Number.NaN }, /got NaN/);
    assert.deepEqual(parseAction('wait', { seconds: 0.5 }), { kind: 'wait', seconds: 0.5 });
  });

  test('env prefix carries only well-formed assignments', () => {
    assert.deepEqual(withEnv({ DISPLAY: ':20', XAUTHORITY: '/tmp/x a' }, ['xdotool', 'key', '--', 'a']), [
      'env', 'DISPLAY=:20', 'XAUTHORITY=/tmp/x a', 'xdotool', 'key', '--', 'a',
    ]);
    assert.throws(() => withEnv({ 'BAD NAME': 'x' }, ['true']), TypeError);
    assert.throws(() => withEnv({ DISPLAY: ':20\nX=1' }, ['true']), TypeError);
  });
});

describe('screenshot output', () => {
  function png(width: number, height: number): Buffer {
    const chunk = (type: string, body: Buffer) => {
      const head = Buffer.alloc(4);
      head.writeUInt32BE(body.length);
      return Buffer.concat([head, Buffer.from(type, 'latin1'), body, Buffer.alloc(4)]);
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(width, 0);
    ihdr.writeUInt32BE(height, 4);
    ihdr[8] = 8;
    ihdr[9] = 2;
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(Buffer.alloc(height * (1 + width * 3)))),
      chunk('IEND', Buffer.alloc(0)),
    ]);
  }

  test('parses the size line and the base64 PNG, and checks they agree', () => {
    const shot = parseScreenshotOutput(`4 3\n${png(4, 3).toString('base64')}\n`);
    assert.deepEqual([shot.width, shot.height], [4, 3]);
    assert.deepEqual(pngSize(shot.png), { width: 4, height: 3 });
    assert.throws(() => parseScreenshotOutput(`5 3\n${png(4, 3).toString('base64')}\n`), /did not return a PNG of the screen/);
    assert.throws(() => parseScreenshotOutput('4 3\nbm90IGEgcG5n\n'), /did not return a PNG/);
    assert.throws(() => parseScreenshotOutput(''), /did not return a PNG/);
  });
});
