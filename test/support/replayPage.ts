// The replay panel's real script (dist/replay.js, noVNC's decoders) in Debian's Chromium, fed a
// recording's segment files: the integration test checks the pictures it draws and the recorder
// bench times its seeks with it. Following a live recording, it plays the panel's host part too
// (src/recordingPanel.ts: followRecording's growth sent as messages).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { followRecording } from '../../src/core/recorderStore';

// The browser's globals, for the functions the page runs (serialized by Playwright; this project
// compiles without the DOM library).
declare const window: any;
declare const document: any;
type HTMLCanvasElement = any;

/** The parts of playwright-core the tests use (its types are not installed with the project). */
export interface Page {
  route(url: string, handler: (route: { request(): { url(): string }; fulfill(response: object): Promise<void> }) => Promise<void>): Promise<void>;
  goto(url: string): Promise<unknown>;
  evaluate<R, A = undefined>(fn: (arg: A) => R, arg?: A): Promise<R>;
  waitForFunction<R, A = undefined>(fn: (arg: A) => R, arg?: A, options?: { timeout?: number; polling?: number }): Promise<{ jsonValue(): Promise<R> }>;
  locator(selector: string): { count(): Promise<number> };
  click(selector: string): Promise<void>;
}
interface Browser {
  newPage(options: object): Promise<Page>;
  close(): Promise<void>;
}
interface Playwright {
  chromium: { launch(options: object): Promise<Browser> };
}

/** playwright-core as the UI harness installs it (scripts/install-test-vscode.sh). */
function playwright(): Playwright {
  const dir = join(process.env.BOTSCREEN_CACHE ?? join(homedir(), '.cache', 'botscreen'), 'harness');
  return createRequire(join(dir, 'package.json'))('playwright-core');
}

/** The replay panel's page, as src/recordingPanel.ts writes it, with a stand-in for VS Code's webview API. */
const REPLAY_PAGE = `<!DOCTYPE html><html><head><meta charset="UTF-8"></head><body>
<div class="toolbar"><button id="play"></button><select id="speed"><option value="1">1</option><option value="2">2</option><option value="8">8</option></select>
<button id="next-action"></button><span id="clock"></span><button id="live" hidden></button><button id="export-video"></button><button id="export-raw"></button><span id="status"></span></div>
<div class="timeline"><input type="range" id="scrub" min="0" max="0" value="0"><div id="marks"></div></div>
<canvas id="output" width="0" height="0"></canvas>
<div id="decoder" style="position:absolute;left:-100000px;width:1px;height:1px;overflow:hidden"></div>
<script>window.posted = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.posted.push(m) });</script>
<script type="module" src="/replay.js"></script></body></html>`;

export interface Drawn {
  /** From posting the seek to the picture of that time on the output canvas. */
  readonly ms: number;
  readonly width: number;
  readonly height: number;
  /** RGBA pixels, when asked for. */
  readonly rgba?: Buffer;
  /** Which segment and how many of its records were fed. */
  readonly where: string;
}

export interface ReplayPage {
  readonly page: Page;
  /** Seeks to `t` (ms into the recording) and waits for its picture. */
  seek(t: number, options?: { readonly pixels?: boolean }): Promise<Drawn>;
  close(): Promise<void>;
}

/** The most often a followed recording is read (the panel's FOLLOW_MS is 1 s; tests go faster). */
const FOLLOW_MS = 300;

/**
 * Opens the replay page on segment files (oldest first) and waits until they are loaded.
 * `follow`: the directory the recording is still written to; what it gains is sent on.
 */
export async function openReplay(files: readonly string[], viewport = { width: 1300, height: 900 }, follow?: string): Promise<ReplayPage> {
  // BENCH_REPLAY_SCRIPT: another build of the replay script, to compare two in one benchmark run.
  const script = readFileSync(process.env.BENCH_REPLAY_SCRIPT ?? join(__dirname, '..', '..', '..', 'dist', 'replay.js'));
  const byName = new Map(files.map((file) => [basename(file), file]));
  const { chromium } = playwright();
  const browser = await chromium.launch({ executablePath: process.env.BOTSCREEN_CHROMIUM || '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport });
    await page.route('http://replay.test/**', async (route) => {
      const url = new URL(route.request().url());
      const file = byName.get(url.pathname.slice(1));
      if (url.pathname === '/') {
        await route.fulfill({ contentType: 'text/html', body: REPLAY_PAGE });
      } else if (url.pathname === '/replay.js') {
        await route.fulfill({ contentType: 'text/javascript', body: script });
      } else {
        await route.fulfill(file ? { contentType: 'application/octet-stream', body: readFileSync(file) } : { status: 404 });
      }
    });
    await page.goto('http://replay.test/');
    const urls = [...byName.keys()].map((name) => `http://replay.test/${name}`);
    const list = [...byName.keys()].map((name, i) => ({ name, url: urls[i] }));
    await page.evaluate(
      (arg) => window.postMessage({ type: 'load', files: arg.list, live: arg.live, strings: { play: 'Play', pause: 'Pause', empty: 'empty', exporting: 'exporting' } }, '*'),
      { list, live: follow !== undefined },
    );
    await page.waitForFunction(() => document.body.dataset.loaded === 'true', undefined, { timeout: 180_000 });
    const stop = follow === undefined ? () => undefined : await followLive(page, follow);
    return {
      page,
      seek: (t, options) => seek(page, t, options?.pixels ?? false),
      close: () => {
        stop();
        return browser.close();
      },
    };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/** The panel's follower (the same followRecording): once the page says what it loaded, what the directory gains is posted to it, in order. */
async function followLive(page: Page, dir: string): Promise<() => void> {
  const loaded = await page.waitForFunction(() => window.posted.find((m: { type: string }) => m.type === 'loaded'), undefined, { timeout: 30_000 });
  const { files } = (await loaded.jsonValue()) as { files: { name: string; bytes: number }[] };
  let posting = Promise.resolve();
  const follow = followRecording(dir, files, ({ appended, dropped }) => {
    const messages = [
      ...appended.map(({ name, bytes }) => ({ type: 'append', name, base64: Buffer.from(bytes).toString('base64') })),
      ...(dropped.length > 0 ? [{ type: 'dropped', names: dropped }] : []),
    ];
    posting = posting
      .then(() =>
        page.evaluate((list) => {
          for (const m of list as { type: string; base64?: string }[]) {
            const { base64, ...rest } = m;
            window.postMessage(base64 === undefined ? rest : { ...rest, bytes: Uint8Array.from(atob(base64), (c: string) => c.charCodeAt(0)) }, '*');
          }
        }, messages),
      )
      .catch(() => undefined);
  }, { intervalMs: FOLLOW_MS });
  return () => follow.dispose();
}

async function seek(page: Page, t: number, pixels: boolean): Promise<Drawn> {
  const began = Date.now();
  await page.evaluate((at) => window.postMessage({ type: 'seek', t: at }, '*'), t);
  await page.waitForFunction(
    (at) => {
      const canvas = document.getElementById('output') as HTMLCanvasElement;
      return canvas.dataset.t === String(at) && canvas.dataset.drawn === 'true';
    },
    t,
    { timeout: 30_000 },
  );
  const ms = Date.now() - began;
  const drawn = await page.evaluate((withPixels) => {
    const canvas = document.getElementById('output') as HTMLCanvasElement;
    let base64: string | undefined;
    if (withPixels) {
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let binary = '';
      for (let i = 0; i < data.data.length; i += 0x8000) {
        binary += String.fromCharCode(...data.data.subarray(i, i + 0x8000));
      }
      base64 = btoa(binary);
    }
    return { width: canvas.width, height: canvas.height, base64, where: `segment ${canvas.dataset.segment}, ${canvas.dataset.fed} records` };
  }, pixels);
  return { ms, width: drawn.width, height: drawn.height, rgba: drawn.base64 === undefined ? undefined : Buffer.from(drawn.base64, 'base64'), where: drawn.where };
}
