// Thumbnails: thumbnail.py's shrinking (run by the real python3 on a synthetic screen), the checks
// of its output, the JPEG made of it (decoded again), and the grab's argv.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { deflateSync } from 'node:zlib';
import { decode } from 'jpeg-js';
import THUMBNAIL_SCRIPT from '../../src/core/thumbnail.py';
import { SCREENSHOT_SCRIPT } from '../../src/core/actions/screenshot';
import { hostSandbox } from '../../src/core/sandbox';
import {
  encodeJpeg,
  grabThumbnail,
  jpegDataUri,
  markerDisplayEnv,
  parseThumbnailOutput,
  sameThumbnail,
  THUMBNAIL_WIDTH,
  ThumbnailError,
} from '../../src/core/thumbnail';

/** A screen's pixels as a function of x and y. */
const pixel = (x: number, y: number) => [(x * 7) % 256, (y * 3) % 256, (x + y) % 256];

/** Stands in for screenshot.py: the same grab() contract, a synthetic screen instead of X. */
function fakeGrabSource(width: number, height: number): string {
  return [
    'def grab():',
    `    w, h = ${width}, ${height}`,
    '    out = bytearray(w * h * 3)',
    '    for y in range(h):',
    '        for x in range(w):',
    '            i = (y * w + x) * 3',
    '            out[i] = (x * 7) % 256',
    '            out[i + 1] = (y * 3) % 256',
    '            out[i + 2] = (x + y) % 256',
    '    return w, h, bytes(out)',
    '',
    "if __name__ == '__main__':",
    "    raise SystemExit('loaded as a program: thumbnail.py must load it under another name')",
  ].join('\n');
}

function runThumbnailPy(grabSource: string): string {
  const result = spawnSync('python3', ['-c', THUMBNAIL_SCRIPT, grabSource, String(THUMBNAIL_WIDTH)], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

test('thumbnail.py shrinks the screen by one step both ways (every n-th pixel), keeping the aspect', () => {
  for (const [width, height] of [
    [1283, 797],
    [1280, 800],
    [300, 200],
  ]) {
    const raw = parseThumbnailOutput(runThumbnailPy(fakeGrabSource(width, height)));
    const step = Math.max(1, Math.ceil(width / THUMBNAIL_WIDTH));
    assert.deepEqual([raw.screenWidth, raw.screenHeight, raw.width, raw.height], [width, height, Math.ceil(width / step), Math.ceil(height / step)]);
    assert.ok(raw.width <= THUMBNAIL_WIDTH);
    for (const [tx, ty] of [
      [0, 0],
      [raw.width - 1, raw.height - 1],
      [17, 33],
    ]) {
      const i = (ty * raw.width + tx) * 3;
      assert.deepEqual([...raw.rgb.subarray(i, i + 3)], pixel(tx * step, ty * step), `pixel ${tx},${ty} of ${width}x${height}`);
    }
  }
});

test('screenshot.py still runs as a program (the screenshot tool), and fails with its own exit code without a display', () => {
  const result = spawnSync('python3', ['-c', SCREENSHOT_SCRIPT], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', DISPLAY: ':59999' } });
  assert.equal(result.status, 3, `exit 3 (no display): ${result.stderr}`);
  assert.match(result.stderr, /^screenshot: /);
});

test("thumbnail.py reuses screenshot.py's grab, exit codes included", () => {
  const result = spawnSync('python3', ['-c', THUMBNAIL_SCRIPT, SCREENSHOT_SCRIPT, String(THUMBNAIL_WIDTH)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', DISPLAY: ':59999' },
  });
  assert.equal(result.status, 3, result.stderr);
  assert.equal(result.stdout, '', 'nothing printed without a picture');
});

test('output that does not add up is refused', () => {
  const pixels = (n: number) => deflateSync(Buffer.alloc(n)).toString('base64');
  assert.throws(() => parseThumbnailOutput(''), ThumbnailError);
  assert.throws(() => parseThumbnailOutput(`1280 800 320 201\n${pixels(320 * 201 * 3)}\n`), /inconsistent sizes/);
  assert.throws(() => parseThumbnailOutput(`1280 800 640 400\n${pixels(640 * 400 * 3)}\n`), /inconsistent sizes/);
  assert.throws(() => parseThumbnailOutput(`1280 800 320 200\n${pixels(320 * 200 * 3 - 1)}\n`), /bytes of pixels/);
  assert.throws(() => parseThumbnailOutput(`1280 800 320 200\n${pixels(320 * 200 * 3 + 100)}\n`), /do not inflate/);
  assert.throws(() => parseThumbnailOutput(`1280 800 320 200\nnot base64 zlib\n`), /do not inflate/);
  const ok = parseThumbnailOutput(`1280 800 320 200\n${pixels(320 * 200 * 3)}\n`);
  assert.equal(ok.rgb.length, 320 * 200 * 3);
});

test('the JPEGs decode to the picture: the right size and aspect, close colours', () => {
  const raw = parseThumbnailOutput(runThumbnailPy(fakeGrabSource(1280, 800)));
  for (const width of [THUMBNAIL_WIDTH, 32]) {
    const { jpeg, width: w, height: h } = encodeJpeg(raw, width);
    assert.deepEqual([jpeg[0], jpeg[1], jpeg.at(-2), jpeg.at(-1)], [0xff, 0xd8, 0xff, 0xd9], 'SOI ... EOI');
    const decoded = decode(jpeg, { useTArray: true });
    assert.deepEqual([decoded.width, decoded.height], [w, h]);
    assert.equal(w, width);
    assert.equal(h, width * (800 / 1280));
    if (width === THUMBNAIL_WIDTH) {
      let error = 0;
      for (let i = 0; i < w * h; i++) {
        for (let c = 0; c < 3; c++) error += Math.abs(decoded.data[i * 4 + c] - raw.rgb[i * 3 + c]);
      }
      // Smooth gradients (with wrap-around edges) at quality 70: a few levels on average.
      assert.ok(error / (w * h * 3) < 12, `mean error ${error / (w * h * 3)}`);
    }
  }
  assert.match(jpegDataUri(new Uint8Array([0xff, 0xd8])), /^data:image\/jpeg;base64,\/9g=$/);
});

test('the same screen encodes to the same bytes (what the Screens tree backs off on); one changed pixel or another size does not', () => {
  const raw = parseThumbnailOutput(runThumbnailPy(fakeGrabSource(1280, 800)));
  const thumbnail = (r: typeof raw, at: number) => {
    const { jpeg, width, height } = encodeJpeg(r, THUMBNAIL_WIDTH);
    return { screenWidth: r.screenWidth, screenHeight: r.screenHeight, jpeg, width, height, icon: jpeg, at, ms: 0, wireBytes: 0 };
  };
  const first = thumbnail(raw, 1);
  assert.ok(sameThumbnail(first, thumbnail({ ...raw, rgb: Buffer.from(raw.rgb) }, 2)), 'grabbed again, at another time');
  const moved = Buffer.from(raw.rgb);
  moved[0] ^= 0xff;
  assert.equal(sameThumbnail(first, thumbnail({ ...raw, rgb: moved }, 3)), false, 'one pixel changed');
  assert.equal(sameThumbnail(first, { ...first, screenWidth: first.screenWidth + 1 }), false, 'another screen size');
});

test('a grab is one exec in the sandbox, not interactive, with the display env; it fails with the exit code', async () => {
  const sandbox = { ...hostSandbox('docker'), exec: (argv: readonly string[], options: { interactive: boolean }) => ({ command: 'SANDBOX', args: [String(options.interactive), ...argv] }) };
  const seen: { command: string; args: readonly string[]; timeoutMs: number }[] = [];
  const stdout = runThumbnailPy(fakeGrabSource(640, 480));
  const thumbnail = await grabThumbnail(sandbox, markerDisplayEnv({ display: ':21', runtimeDir: '/tmp/botscreen-1000/abc' }), {
    timeoutMs: 1234,
    run: async (command, options) => {
      seen.push({ ...command, timeoutMs: options.timeoutMs });
      return { exitCode: 0, stdout, stderr: '', timedOut: false };
    },
  });
  assert.equal(seen.length, 1);
  const [interactive, ...argv] = seen[0].args;
  assert.equal(interactive, 'false');
  assert.deepEqual(argv.slice(0, 6), ['env', 'DISPLAY=:21', 'XAUTHORITY=/tmp/botscreen-1000/abc/Xauthority', 'python3', '-c', THUMBNAIL_SCRIPT]);
  assert.deepEqual(argv.slice(6), [SCREENSHOT_SCRIPT, String(THUMBNAIL_WIDTH)]);
  assert.equal(seen[0].timeoutMs, 1234);
  assert.deepEqual([thumbnail.screenWidth, thumbnail.screenHeight, thumbnail.width, thumbnail.height], [640, 480, 320, 240]);
  assert.equal(thumbnail.wireBytes, Buffer.byteLength(stdout));
  assert.equal(decode(thumbnail.icon, { useTArray: true }).width, 32);

  await assert.rejects(
    grabThumbnail(sandbox, { DISPLAY: ':21' }, { run: async () => ({ exitCode: 3, stdout: '', stderr: 'screenshot: cannot open the display\n', timedOut: false }) }),
    (err: unknown) => err instanceof ThumbnailError && err.exitCode === 3 && /cannot open the display/.test(err.message),
  );
  assert.deepEqual(markerDisplayEnv({ display: ':5', runtimeDir: '' }), { DISPLAY: ':5' });
});
