// Decodes noVNC's JPEG and PNG rectangles (Tight's JPEG, TightPNG) into ImageBitmaps from a Blob
// of their bytes, in place of noVNC 1.7's `new Image()` with a base64 `data:` URL per rectangle.
//
// Why: Chromium's renderer keeps memory for every distinct data: URL image it decoded, outside the
// JS heap (its image cache), and a screen that keeps changing (a terminal flood) makes every
// rectangle a new URL. The Screen webview's renderer grew 150–300 MiB a minute without levelling
// off (issue 13's soak) while its JS heap stayed flat. In a plain Chromium 156 page, 2,800
// distinct 1280×64 JPEGs drawn noVNC's way grew the renderer from 124 to 730 MiB in 70 s; the same
// through createImageBitmap stayed at 175 MiB, and skip the base64 round trip too. noVNC tracks
// the growth as novnc/noVNC#2075; its 1.7 release does not avoid it.
//
// Not on the key → frame path: a typed key's update has no picture rectangle (in the benchmark's
// terminal, at 1280×800, 1920×1080 and 2560×1440: one 32×19 Tight rectangle that is not JPEG, drawn
// in the task that received it, with the render queue empty), so this decoder cannot slow it.
// WebCodecs' ImageDecoder (decoding from the bytes, no Blob) readied a session's first picture
// rectangles sooner (median 27 ms against 117 in the Screen webview) but cost memory: in a plain
// Chromium page, distinct 1280×64 JPEGs grew the renderer 117 → 477 MiB over the first 1,000 and
// it stayed there for 2,500 more; through createImageBitmap, 117 → 166 MiB over 1,500.
import Display from '../node_modules/@novnc/novnc/core/display.js';

/**
 * What a decode gives back: an ImageBitmap in the webview, drawn with drawImage and then closed.
 * Named by what noVNC uses of it, so a plain Node test can hand in its own (test/unit/imageDecode.test.ts).
 */
export interface Picture {
  readonly width: number;
  readonly height: number;
  close(): void;
}

/**
 * Makes every noVNC display of this document decode its picture rectangles with `decode`
 * (`createImageBitmap` in the webview). Each rectangle goes into noVNC's render queue as the kind
 * it has for pictures decoded off the main thread (WebCodecs' video frames): the queue waits for
 * it in order, draws it with drawImage and closes it, so nothing of it outlives the draw.
 */
export function decodeRectsAsBitmaps(decode: (blob: Blob) => Promise<Picture>): void {
  Display.prototype.imageRect = function (this: Display, x: number, y: number, width: number, height: number, mime: string, bytes: Uint8Array<ArrayBuffer>) {
    // noVNC's own rule: its queue cannot hold an empty picture.
    if (width === 0 || height === 0) {
      return;
    }
    const pending: PendingPicture = { ready: false, frame: undefined, promise: Promise.resolve() };
    const action: RenderAction = { type: 'frame', frame: pending, x, y, width, height };
    // The Blob copies the bytes now: noVNC may hand a view into its receive queue, reused next.
    pending.promise = decode(new Blob([bytes], { type: mime })).then(
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
