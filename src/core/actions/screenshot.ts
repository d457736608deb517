/**
 * Screenshots of the screen, for the agent's screenshot tool and the person's Save Screenshot
 * command alike: grabbed inside the sandbox (screenshot.py: libX11 and the Python standard
 * library, no extra package), sent back as a size line and a base64 PNG, and checked here.
 */
import SCREENSHOT_SCRIPT from '../screenshot.py';
import type { PublishedScreen } from '../launcher';
import { run } from '../runner';
import type { Sandbox } from '../sandbox';
import type { Geometry } from '../validate';
import { displayEnv, EXEC_TIMEOUT_MS, must, withEnv } from './sessionExec';

export { SCREENSHOT_SCRIPT };

/** A screenshot larger than this (base64 text from the sandbox) is refused. */
export const MAX_SCREENSHOT_BYTES = 32 * 1024 * 1024;

export interface Screenshot {
  readonly png: Uint8Array;
  readonly width: number;
  readonly height: number;
}

function screenshotArgv(): string[] {
  return ['python3', '-c', SCREENSHOT_SCRIPT];
}

/**
 * A PNG of the running screen, grabbed inside its sandbox. Not gated by the control lease:
 * people take screenshots too (Save Screenshot); the agent's tool checks the lease around it.
 */
export async function captureScreenshot(target: { readonly sandbox: Sandbox; readonly screen: PublishedScreen }): Promise<Screenshot> {
  const argv = withEnv(displayEnv(target.screen), screenshotArgv());
  const result = await run(target.sandbox.exec(argv, { interactive: false }), { timeoutMs: EXEC_TIMEOUT_MS });
  must('screenshot', result);
  return parseScreenshotOutput(result.stdout);
}

function parseGeometryOutput(stdout: string): Geometry | undefined {
  const match = /^\s*(\d{1,5})\s+(\d{1,5})\s*$/.exec(stdout);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Width and height from a PNG's IHDR, or undefined when the bytes are not a PNG. */
export function pngSize(png: Uint8Array): Geometry | undefined {
  if (png.length < 24 || PNG_SIGNATURE.some((b, i) => png[i] !== b)) {
    return undefined;
  }
  const type = String.fromCharCode(png[12], png[13], png[14], png[15]);
  if (type !== 'IHDR') {
    return undefined;
  }
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** The screenshot script's output (`W H` line, base64 PNG line), checked. */
export function parseScreenshotOutput(stdout: string): Screenshot {
  if (stdout.length > MAX_SCREENSHOT_BYTES) {
    throw new Error(`the screenshot is larger than ${MAX_SCREENSHOT_BYTES} bytes`);
  }
  const [header = '', body = ''] = stdout.split('\n');
  const size = parseGeometryOutput(header);
  const png = new Uint8Array(Buffer.from(body.trim(), 'base64'));
  const actual = pngSize(png);
  if (!size || !actual || actual.width !== size.width || actual.height !== size.height) {
    throw new Error('the screenshot program did not return a PNG of the screen');
  }
  return { png, width: actual.width, height: actual.height };
}
