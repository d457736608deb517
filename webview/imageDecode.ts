// Decodes noVNC's JPEG and PNG rectangles (Tight's JPEG, TightPNG) without a data: URL: with
// WebCodecs' ImageDecoder straight from the rectangle's bytes where the page has it, else with
// createImageBitmap from a Blob of them; in place of noVNC 1.7's `new Image()` with a base64
// `data:` URL per rectangle.
//
// Why not noVNC's way: Chromium's renderer keeps memory for every distinct data: URL image it
// decoded, outside the JS heap (its image cache), and a screen that keeps changing (a terminal
// flood) makes every rectangle a new URL. The Screen webview's renderer grew 150–300 MiB a minute
// without levelling off (issue 13's soak) while its JS heap stayed flat. In a plain Chromium 156
// page, 2,800 distinct 1280×64 JPEGs drawn noVNC's way grew the renderer from 124 to 730 MiB in
// 70 s; the same through createImageBitmap stayed at 175 MiB, and skip the base64 round trip too.
// noVNC tracks the growth as novnc/noVNC#2075; its 1.7 release does not avoid it.
//
// Why ImageDecoder first: createImageBitmap takes a Blob, whose bytes Chromium hands to the browser
// process's blob store and reads back before decoding; ImageDecoder decodes a copy of the bytes in the
// renderer. In a plain Chromium page on a loaded machine, 16×20 to 400×40 JPEGs reached the canvas
// in 2.6–4.1 ms at the median, 5–23 ms at p95, through createImageBitmap(Blob), and in 0.9–1.2 /
// 3.4–4.4 ms through ImageDecoder (noVNC's data: URL images: 1.8–2.4 / 4–16 ms). In the Screen
// webview (three opens each, same bench), the five picture rectangles of a session's first update
// were ready to draw 44–121 ms (median 117) after they arrived through the Blob, 16–82 ms (median
// 27) through ImageDecoder. A typed key's update has no picture
// rectangle (in the bench's terminal: one 32×19 Tight rectangle that is not JPEG, drawn in the task
// that received it), so neither way is on the key → frame path.
import Display from '../node_modules/@novnc/novnc/core/display.js';

/**
 * What a decode gives back: a VideoFrame (ImageDecoder) or an ImageBitmap in the webview, drawn
 * with drawImage and then closed. Named by what noVNC uses of it, so a plain Node test can hand in
 * its own (test/unit/imageDecode.test.ts).
 */
export interface Picture {
  close(): void;
}

/**
 * Decodes one rectangle. It must take what it needs of `bytes` before it returns (noVNC may hand a
 * view into its receive queue, reused for the next message), and may throw or reject for bytes
 * that are not a picture.
 */
export type Decode = (bytes: Uint8Array<ArrayBuffer>, mime: string) => Promise<Picture>;

/** What browserDecode uses of the page: its ImageDecoder (WebCodecs; Chromium in a secure context), createImageBitmap. */
export interface DecodeScope {
  readonly ImageDecoder?: new (init: { data: Uint8Array<ArrayBuffer>; type: string }) => {
    decode(): Promise<{ image: Picture }>;
    close(): void;
  };
  createImageBitmap(blob: Blob): Promise<Picture>;
}

/**
 * The webview's decode (`scope` is its window): ImageDecoder from the bytes (it copies them as it
 * is made), or, in a page without it, createImageBitmap from a Blob (which copies them too). The
 * decoder is closed once it answered; the picture lives on until noVNC draws and closes it.
 */
export function browserDecode(scope: DecodeScope): Decode {
  const imageDecoder = scope.ImageDecoder;
  if (imageDecoder === undefined) {
    return (bytes, mime) => scope.createImageBitmap(new Blob([bytes], { type: mime }));
  }
  return (bytes, mime) => {
    const decoder = new imageDecoder({ data: bytes, type: mime });
    return decoder.decode().then(
      ({ image }) => {
        decoder.close();
        return image;
      },
      (err: unknown) => {
        decoder.close();
        throw err;
      },
    );
  };
}

/**
 * Makes every noVNC display of this document decode its picture rectangles with `decode`
 * (`browserDecode()` in the webview). Each rectangle goes into noVNC's render queue as the kind
 * it has for pictures decoded off the main thread (WebCodecs' video frames): the queue waits for
 * it in order, draws it with drawImage and closes it, so nothing of it outlives the draw.
 */
export function decodeRectsAsBitmaps(decode: Decode): void {
  Display.prototype.imageRect = function (this: Display, x: number, y: number, width: number, height: number, mime: string, bytes: Uint8Array<ArrayBuffer>) {
    // noVNC's own rule: its queue cannot hold an empty picture.
    if (width === 0 || height === 0) {
      return;
    }
    const pending: PendingPicture = { ready: false, frame: undefined, promise: Promise.resolve() };
    const action: RenderAction = { type: 'frame', frame: pending, x, y, width, height };
    let decoded: Promise<Picture>;
    try {
      decoded = decode(bytes, mime);
    } catch (err) {
      decoded = Promise.reject(err);
    }
    pending.promise = decoded.then(
      (picture) => {
        pending.frame = picture;
        pending.ready = true;
      },
      () => {
        // A rectangle that does not decode is left out (its area keeps the old pixels until the
        // screen changes there again): noVNC's queue skips a kind it does not know. Its own image
        // path stopped drawing for good on such a rectangle.
        action.type = 'undecodable';
        pending.ready = true;
      },
    );
    this._renderQPush(action);
  };
}

/** noVNC's render-queue entry for a picture decoded off the main thread (`a.frame` in display.js). */
interface PendingPicture {
  ready: boolean;
  frame: Picture | undefined;
  promise: Promise<void>;
}

interface RenderAction {
  type: string;
  frame: PendingPicture;
  x: number;
  y: number;
  width: number;
  height: number;
}
