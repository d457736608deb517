/**
 * Thumbnails of a screen for the Screens overview: a read-only grab inside the screen's sandbox
 * (thumbnail.py, reusing screenshot.py's libX11 grab; no input, never the control lease, its own
 * exec so it never waits for an agent action or holds one up), shrunk there, and encoded as JPEG
 * here (a tooltip picture and a tree icon).
 */
import { inflateSync } from 'node:zlib';
import { encode } from 'jpeg-js';
import THUMBNAIL_SCRIPT from './thumbnail.py';
import { SCREENSHOT_SCRIPT } from './actions/screenshot';
import { withEnv } from './actions/sessionExec';
import type { Command } from './command';
import { failureDetail } from './failure';
import { run, type RunResult } from './runner';
import type { Sandbox } from './sandbox';

/** Width of the tooltip's picture: the sandbox shrinks the screen to at most this. */
export const THUMBNAIL_WIDTH = 320;
/** Width of the tree item's icon (shown at 16 CSS pixels; twice that for high-DPI screens). */
export const ICON_WIDTH = 32;
/** How long one grab may take before its exec is killed. */
export const GRAB_TIMEOUT_MS = 10_000;
const JPEG_QUALITY = 70;
/** More output than a 320-pixel-wide RGB thumbnail of a 16:1 screen can make: refused. */
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

export interface Thumbnail {
  /** The screen's own size. */
  readonly screenWidth: number;
  readonly screenHeight: number;
  /** The tooltip picture. */
  readonly jpeg: Uint8Array;
  readonly width: number;
  readonly height: number;
  /** The tree icon. */
  readonly icon: Uint8Array;
  /** Date.now() when the grab ended. */
  readonly at: number;
  /** What the grab cost: wall time of the exec plus encoding, and bytes that came out of the sandbox. */
  readonly ms: number;
  readonly wireBytes: number;
}

/** A grab's program failed; `exitCode` says how (3 no display, 4 grab failed, undefined: no exit). */
export class ThumbnailError extends Error {
  constructor(
    readonly exitCode: number | undefined,
    detail: string,
  ) {
    super(`thumbnail grab failed: ${detail}`);
  }
}

/** The command that grabs a thumbnail of the X display `env` names, run in `sandbox` as its desktop user. */
export function thumbnailCommand(sandbox: Sandbox, env: Readonly<Record<string, string>>): Command {
  return sandbox.exec(withEnv(env, ['python3', '-c', THUMBNAIL_SCRIPT, SCREENSHOT_SCRIPT, String(THUMBNAIL_WIDTH)]), { interactive: false });
}

/** The X session variables of a screen recorded by a marker: its display, and its X cookie when it has a runtime dir. */
export function markerDisplayEnv(marker: { readonly display: string; readonly runtimeDir: string }): Record<string, string> {
  // launcher.sh writes the cookie to "$rdir/Xauthority" (a screen on this machine has a runtime dir too).
  return marker.runtimeDir ? { DISPLAY: marker.display, XAUTHORITY: `${marker.runtimeDir}/Xauthority` } : { DISPLAY: marker.display };
}

export interface RawThumbnail {
  readonly screenWidth: number;
  readonly screenHeight: number;
  readonly width: number;
  readonly height: number;
  /** Packed 8-bit RGB rows. */
  readonly rgb: Uint8Array;
}

/** thumbnail.py's output, checked: the sizes agree with each other and with the pixels. */
export function parseThumbnailOutput(stdout: string): RawThumbnail {
  if (stdout.length > MAX_OUTPUT_CHARS) {
    throw new ThumbnailError(0, `the thumbnail is larger than ${MAX_OUTPUT_CHARS} characters`);
  }
  const [header = '', body = ''] = stdout.split('\n');
  const match = /^(\d{1,5}) (\d{1,5}) (\d{1,4}) (\d{1,4})$/.exec(header.trim());
  if (!match) {
    throw new ThumbnailError(0, 'the thumbnail program printed no sizes');
  }
  const [screenWidth, screenHeight, width, height] = match.slice(1).map(Number);
  // The step thumbnail.py takes for THUMBNAIL_WIDTH (what thumbnailCommand passes it).
  const step = Math.max(1, Math.ceil(screenWidth / THUMBNAIL_WIDTH));
  if (screenWidth < 1 || Math.ceil(screenWidth / step) !== width || Math.ceil(screenHeight / step) !== height) {
    throw new ThumbnailError(0, `inconsistent sizes ${header.trim()}`);
  }
  let rgb: Buffer;
  try {
    rgb = inflateSync(Buffer.from(body.trim(), 'base64'), { maxOutputLength: width * height * 3 + 1 });
  } catch (err) {
    throw new ThumbnailError(0, `the pixels do not inflate: ${(err as Error).message}`);
  }
  if (rgb.length !== width * height * 3) {
    throw new ThumbnailError(0, `${rgb.length} bytes of pixels for ${width}x${height}`);
  }
  return { screenWidth, screenHeight, width, height, rgb: new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.byteLength) };
}

/** A JPEG of RGB pixels shrunk (nearest pixel) to `width` wide, the aspect kept. */
export function encodeJpeg(raw: Pick<RawThumbnail, 'width' | 'height' | 'rgb'>, width: number): { jpeg: Uint8Array; width: number; height: number } {
  const w = Math.max(1, Math.min(width, raw.width));
  const h = Math.max(1, Math.round((raw.height * w) / raw.width));
  const rgba = Buffer.alloc(w * h * 4);
  for (let y = 0; y < h; y++) {
    const sy = Math.min(raw.height - 1, Math.floor((y * raw.height) / h));
    for (let x = 0; x < w; x++) {
      const sx = Math.min(raw.width - 1, Math.floor((x * raw.width) / w));
      const from = (sy * raw.width + sx) * 3;
      const to = (y * w + x) * 4;
      rgba[to] = raw.rgb[from];
      rgba[to + 1] = raw.rgb[from + 1];
      rgba[to + 2] = raw.rgb[from + 2];
      rgba[to + 3] = 255;
    }
  }
  const { data } = encode({ data: rgba, width: w, height: h }, JPEG_QUALITY);
  return { jpeg: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: w, height: h };
}

/**
 * Grabs one thumbnail: its own exec in the sandbox (never queued behind an agent action, nor
 * holding one up), killed after `timeoutMs`. Throws `ThumbnailError` when the grab fails.
 */
export async function grabThumbnail(
  sandbox: Sandbox,
  env: Readonly<Record<string, string>>,
  options: { readonly timeoutMs?: number; readonly run?: (command: Command, options: { timeoutMs: number }) => Promise<RunResult> } = {},
): Promise<Thumbnail> {
  const started = Date.now();
  const result = await (options.run ?? run)(thumbnailCommand(sandbox, env), { timeoutMs: options.timeoutMs ?? GRAB_TIMEOUT_MS });
  if (result.exitCode !== 0) {
    throw new ThumbnailError(result.exitCode, failureDetail(result, { lines: 3, maxChars: 300, stderrOnly: true }));
  }
  const raw = parseThumbnailOutput(result.stdout);
  const picture = encodeJpeg(raw, THUMBNAIL_WIDTH);
  const icon = encodeJpeg(raw, ICON_WIDTH);
  const at = Date.now();
  return {
    screenWidth: raw.screenWidth,
    screenHeight: raw.screenHeight,
    jpeg: picture.jpeg,
    width: picture.width,
    height: picture.height,
    icon: icon.jpeg,
    at,
    ms: at - started,
    wireBytes: Buffer.byteLength(result.stdout),
  };
}

/** A `data:` URI of a JPEG (what the tree icon and the Markdown tooltips show). */
export function jpegDataUri(jpeg: Uint8Array): string {
  return `data:image/jpeg;base64,${Buffer.from(jpeg.buffer, jpeg.byteOffset, jpeg.byteLength).toString('base64')}`;
}

/** Whether two grabs show the same picture (the same screen size and the same JPEG bytes: the encoding is deterministic). */
export function sameThumbnail(a: Thumbnail, b: Thumbnail): boolean {
  return (
    a.screenWidth === b.screenWidth &&
    a.screenHeight === b.screenHeight &&
    Buffer.from(a.jpeg.buffer, a.jpeg.byteOffset, a.jpeg.byteLength).equals(b.jpeg)
  );
}
