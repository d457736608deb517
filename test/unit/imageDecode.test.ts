/// <reference path="../../webview/novnc.d.ts" />
// noVNC 1.7's own Display (its real render queue) with ./webview/imageDecode.ts in place: picture
// rectangles decode from their bytes (ImageDecoder, or createImageBitmap from a Blob), never
// through an Image with a data: URL (which grew Chromium's renderer without bound under a flood),
// and still draw in order. The canvas, ImageDecoder and createImageBitmap are stand-ins: Node has none.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type Display from '../../node_modules/@novnc/novnc/core/display.js';
import type { DecodeScope, Picture } from '../../webview/imageDecode';

type Call = [string, ...unknown[]];

/** A canvas whose 2D context records what is drawn on it. */
function recordingCanvas(calls: Call[]): object {
  const context = {
    fillStyle: '',
    drawImage: (...args: unknown[]) => void calls.push(['drawImage', ...args]),
    fillRect: (...args: unknown[]) => void calls.push(['fillRect', ...args]),
    putImageData: (...args: unknown[]) => void calls.push(['putImageData', ...args]),
  };
  return { width: 0, height: 0, style: {}, getContext: () => context };
}

/** A decode the test finishes by hand, in any order, to show the queue keeps noVNC's order. */
function manualDecoder() {
  const started: { bytes: number[]; mime: string; resolve: (p: Picture) => void; reject: (e: Error) => void }[] = [];
  const decode = (bytes: Uint8Array, mime: string) => new Promise<Picture>((resolve, reject) => started.push({ bytes: [...bytes], mime, resolve, reject }));
  return { started, decode };
}

function picture(name: string): Picture & { name: string; closed: number } {
  return { name, closed: 0, close() { this.closed++; } };
}

const globals = globalThis as Record<string, unknown>;
const saved = { window: globals.window, document: globals.document, navigator: globals.navigator, Image: globals.Image };
/** Loaded once the browser globals noVNC reads when its modules load are in place. */
let DisplayClass: typeof Display;
let decodeRectsAsBitmaps: typeof import('../../webview/imageDecode').decodeRectsAsBitmaps;
let browserDecode: typeof import('../../webview/imageDecode').browserDecode;
let backbufferCalls: Call[] = [];
let imagesMade = 0;
/** What was drawn on the display's backbuffer, pictures by name. */
const drawn = (): unknown[][] => backbufferCalls.map(([op, ...args]) => [op, ...args.map((a) => (typeof a === 'object' && a !== null && 'name' in a ? a.name : a))]);

before(async () => {
  globals.window = { console }; // noVNC's logging picks its console when it loads
  globals.document = { createElement: () => recordingCanvas(backbufferCalls) };
  if (globals.navigator === undefined) {
    globals.navigator = { userAgent: 'node' }; // noVNC's constructor logs it
  }
  // noVNC's own imageRect makes one of these per rectangle, with a data: URL as its src.
  globals.Image = class {
    constructor() {
      imagesMade++;
    }
  };
  DisplayClass = (await import('../../node_modules/@novnc/novnc/core/display.js')).default;
  ({ decodeRectsAsBitmaps, browserDecode } = await import('../../webview/imageDecode'));
});

after(() => {
  Object.assign(globals, saved);
});

function display(decode: (bytes: Uint8Array<ArrayBuffer>, mime: string) => Promise<Picture>): Display {
  backbufferCalls = [];
  imagesMade = 0;
  decodeRectsAsBitmaps(decode);
  return new DisplayClass(recordingCanvas([]));
}

test('picture rectangles decode from their bytes (no Image, no data: URL) and draw in noVNC\'s order, each closed once drawn', async () => {
  const { started, decode } = manualDecoder();
  const d = display(decode);
  d.imageRect(0, 0, 10, 10, 'image/jpeg', new Uint8Array([0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]));
  d.fillRect(20, 20, 5, 5, [1, 2, 3]);
  d.imageRect(30, 30, 4, 4, 'image/png', new Uint8Array([0x89, 0x50]));
  assert.equal(imagesMade, 0, 'no Image element is made for a rectangle');
  assert.equal(started.length, 2, 'both rectangles decode at once, off the queue');
  assert.deepEqual([started[0].mime, started[0].bytes], ['image/jpeg', [0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]]);
  assert.deepEqual([started[1].mime, started[1].bytes], ['image/png', [0x89, 0x50]]);
  assert.deepEqual(drawn(), [], 'nothing is drawn before the first picture is decoded');
  assert.equal(d.pending(), true, 'noVNC sees the queue busy (it waits before reading the next update)');

  const second = picture('second');
  const first = picture('first');
  started[1].resolve(second); // the later one finishes first: still drawn after the earlier
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(drawn(), []);
  started[0].resolve(first);
  await d.flush();
  assert.deepEqual(drawn(), [
    ['drawImage', 'first', 0, 0, 10, 10, 0, 0, 10, 10],
    ['fillRect', 20, 20, 5, 5],
    ['drawImage', 'second', 0, 0, 4, 4, 30, 30, 4, 4],
  ]);
  assert.deepEqual([first.closed, second.closed], [1, 1], 'each decoded picture is released once drawn');
  assert.equal(d.pending(), false);
});

test('a rectangle that does not decode is left out and the queue goes on (noVNC\'s own image path stopped it for good)', async () => {
  const { started, decode } = manualDecoder();
  const d = display(decode);
  d.imageRect(0, 0, 8, 8, 'image/jpeg', new Uint8Array([1, 2, 3]));
  d.fillRect(1, 1, 2, 2, [9, 9, 9]);
  started[0].reject(new Error('not a JPEG'));
  await d.flush();
  assert.deepEqual(drawn(), [['fillRect', 1, 1, 2, 2]]);
  assert.equal(d.pending(), false);
});

test('an empty rectangle decodes nothing and queues nothing', () => {
  const { started, decode } = manualDecoder();
  const d = display(decode);
  d.imageRect(0, 0, 0, 16, 'image/jpeg', new Uint8Array([1]));
  assert.equal(started.length, 0);
  assert.equal(d.pending(), false);
});

/** A page's ImageDecoder and createImageBitmap, recording what they were given; `fails` makes every decode reject. */
function fakeScope(withImageDecoder: boolean, fails = false) {
  const made: { data: Uint8Array; type: string; closed: number; decoded: Picture & { name: string; closed: number } }[] = [];
  const blobs: Blob[] = [];
  const scope: DecodeScope = {
    ImageDecoder: withImageDecoder
      ? class {
          readonly entry;
          constructor(init: { data: Uint8Array<ArrayBuffer>; type: string }) {
            if (init.type === '') {
              throw new TypeError('type is empty'); // the real one refuses such an init at once
            }
            this.entry = { data: init.data, type: init.type, closed: 0, decoded: picture(`frame ${made.length}`) };
            made.push(this.entry);
          }
          decode() {
            return fails ? Promise.reject(new Error('EncodingError')) : Promise.resolve({ image: this.entry.decoded });
          }
          close() {
            this.entry.closed++;
          }
        }
      : undefined,
    createImageBitmap: (blob: Blob) => {
      blobs.push(blob);
      return Promise.resolve(picture(`bitmap ${blobs.length - 1}`));
    },
  };
  return { scope, made, blobs };
}

test('in a page with ImageDecoder a rectangle decodes straight from its bytes (no Blob), the decoder closed once it answered, the frame once drawn', async () => {
  const { scope, made, blobs } = fakeScope(true);
  const d = display(browserDecode(scope));
  d.imageRect(5, 6, 7, 8, 'image/jpeg', new Uint8Array([0xff, 0xd8, 9, 0xff, 0xd9]));
  d.imageRect(0, 0, 2, 2, 'image/png', new Uint8Array([0x89, 0x50]));
  await d.flush();
  assert.deepEqual(made.map((m) => [m.type, [...m.data]]), [['image/jpeg', [0xff, 0xd8, 9, 0xff, 0xd9]], ['image/png', [0x89, 0x50]]]);
  assert.equal(blobs.length, 0, 'no Blob, no createImageBitmap');
  assert.deepEqual(drawn(), [
    ['drawImage', 'frame 0', 0, 0, 7, 8, 5, 6, 7, 8],
    ['drawImage', 'frame 1', 0, 0, 2, 2, 0, 0, 2, 2],
  ]);
  assert.deepEqual(made.map((m) => [m.closed, m.decoded.closed]), [[1, 1], [1, 1]], 'each decoder and each frame released');
});

test('with ImageDecoder, a rectangle it cannot decode (or an init it refuses at once) is left out, its decoder closed, and the queue goes on', async () => {
  const { scope, made } = fakeScope(true, true);
  const d = display(browserDecode(scope));
  d.imageRect(0, 0, 8, 8, 'image/jpeg', new Uint8Array([1, 2, 3]));
  d.imageRect(0, 0, 8, 8, '', new Uint8Array([1, 2, 3]));
  d.fillRect(1, 1, 2, 2, [9, 9, 9]);
  await d.flush();
  assert.deepEqual(drawn(), [['fillRect', 1, 1, 2, 2]]);
  assert.deepEqual(made.map((m) => m.closed), [1], 'the decoder that failed is closed; the refused one was never made');
  assert.equal(d.pending(), false);
});

test('in a page without ImageDecoder a rectangle decodes with createImageBitmap from a Blob holding its bytes as they were when it arrived', async () => {
  const { scope, blobs } = fakeScope(false);
  const d = display(browserDecode(scope));
  const jpeg = new Uint8Array([0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]);
  d.imageRect(0, 0, 10, 10, 'image/jpeg', jpeg);
  jpeg.fill(0); // noVNC reuses its receive queue: the Blob must hold the bytes as they were
  await d.flush();
  assert.equal(blobs.length, 1);
  assert.equal(blobs[0].type, 'image/jpeg');
  assert.deepEqual([...new Uint8Array(await blobs[0].arrayBuffer())], [0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]);
  assert.deepEqual(drawn(), [['drawImage', 'bitmap 0', 0, 0, 10, 10, 0, 0, 10, 10]]);
});
