/// <reference path="../../webview/novnc.d.ts" />
// noVNC 1.7's own Display (its real render queue) with ./webview/imageDecode.ts in place: picture
// rectangles decode from a Blob, never through an Image with a data: URL (which grew Chromium's
// renderer without bound under a flood), and still draw in order. The canvas is a recording
// stand-in: Node has none.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type Display from '../../node_modules/@novnc/novnc/core/display.js';
import type { Picture } from '../../webview/imageDecode';

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
  const started: { blob: Blob; resolve: (p: Picture) => void; reject: (e: Error) => void }[] = [];
  const decode = (blob: Blob) => new Promise<Picture>((resolve, reject) => started.push({ blob, resolve, reject }));
  return { started, decode };
}

function picture(name: string, width: number, height: number): Picture & { name: string; closed: number } {
  return { name, width, height, closed: 0, close() { this.closed++; } };
}

const globals = globalThis as Record<string, unknown>;
const saved = { window: globals.window, document: globals.document, navigator: globals.navigator, Image: globals.Image };
/** Loaded once the browser globals noVNC reads when its modules load are in place. */
let DisplayClass: typeof Display;
let decodeRectsAsBitmaps: typeof import('../../webview/imageDecode').decodeRectsAsBitmaps;
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
  ({ decodeRectsAsBitmaps } = await import('../../webview/imageDecode'));
});

after(() => {
  Object.assign(globals, saved);
});

function display(decode: (blob: Blob) => Promise<Picture>): Display {
  backbufferCalls = [];
  imagesMade = 0;
  decodeRectsAsBitmaps(decode);
  return new DisplayClass(recordingCanvas([]));
}

test('picture rectangles decode from a Blob of their bytes (no Image, no data: URL) and draw in noVNC\'s order, each closed once drawn', async () => {
  const { started, decode } = manualDecoder();
  const d = display(decode);
  const jpeg = new Uint8Array([0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]);
  d.imageRect(0, 0, 10, 10, 'image/jpeg', jpeg);
  jpeg.fill(0); // noVNC reuses its receive queue: the Blob must hold the bytes as they were
  d.fillRect(20, 20, 5, 5, [1, 2, 3]);
  d.imageRect(30, 30, 4, 4, 'image/png', new Uint8Array([0x89, 0x50]));
  assert.equal(imagesMade, 0, 'no Image element is made for a rectangle');
  assert.equal(started.length, 2, 'both rectangles decode at once, off the queue');
  assert.equal(started[0].blob.type, 'image/jpeg');
  assert.deepEqual([...new Uint8Array(await started[0].blob.arrayBuffer())], [0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]);
  assert.equal(started[1].blob.type, 'image/png');
  assert.deepEqual(drawn(), [], 'nothing is drawn before the first picture is decoded');
  assert.equal(d.pending(), true, 'noVNC sees the queue busy (it waits before reading the next update)');

  const second = picture('second', 4, 4);
  const first = picture('first', 10, 10);
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
