// The flight recorder against a real Docker sandbox and its real Xvnc: about two minutes of a
// terminal flood in bursts plus 20 agent actions are recorded through the recorder's own relay;
// the recording is replayed by the real replay script (dist/replay.js, noVNC's decoders) in
// Debian's Chromium, and the pictures it draws at the times live screenshots were taken must
// match those screenshots (and not the neighbouring ones); a second recorder bounded at 8 MB
// records the same flood and must never exceed its bound; the WebM export is read by ffprobe.
// A replay opened on a recording still being written follows it: frames recorded after it opened
// are shown by seeking there, and by playing on from "Live".
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { after, describe, test } from 'node:test';
import { AgentActionRunner } from '../../src/core/actions/agentActionRunner';
import type { ActionResult } from '../../src/core/actions/catalog';
import { LeaseStore } from '../../src/core/lease';
import { SandboxBackends } from '../../src/core/backends/registry';
import { actionEvent, listSegments } from '../../src/core/recorder';
import type { RecorderProcess } from '../../src/core/recorderProcess';
import { readScreenRecording, recordingOf } from '../../src/core/recorderStore';
import { timelineOf } from '../../src/core/recordingFormat';
import { ScreenController } from '../../src/core/screen';
import { recorderProcess, removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';
import { openReplay } from '../support/replayPage';

const WIDTH = 1024;
const HEIGHT = 640;
const ROUNDS = 12;
const BOUND_MB = 8;
const tag = randomBytes(4).toString('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** RGB pixels of a PNG as the screenshot script writes it (8-bit RGB, filter 0 on every row). */
function pngPixels(png: Uint8Array): { width: number; height: number; rgb: Buffer } {
  const buf = Buffer.from(png);
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length; ) {
    const length = buf.readUInt32BE(at);
    if (buf.toString('latin1', at + 4, at + 8) === 'IDAT') {
      idat.push(buf.subarray(at + 8, at + 8 + length));
    }
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const rgb = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    assert.equal(raw[y * (1 + width * 3)], 0, 'filter 0');
    raw.copy(rgb, y * width * 3, y * (1 + width * 3) + 1, (y + 1) * (1 + width * 3));
  }
  return { width, height, rgb };
}

/** The share of pixels whose largest channel difference exceeds 48 (JPEG noise stays below). */
function differing(rgb: Buffer, rgba: Buffer): number {
  let count = 0;
  const pixels = rgb.length / 3;
  for (let i = 0; i < pixels; i++) {
    const d = Math.max(Math.abs(rgb[3 * i] - rgba[4 * i]), Math.abs(rgb[3 * i + 1] - rgba[4 * i + 1]), Math.abs(rgb[3 * i + 2] - rgba[4 * i + 2]));
    if (d > 48) {
      count++;
    }
  }
  return count / pixels;
}

// The browser's globals, for the functions the page runs (serialized by Playwright; this project
// compiles without the DOM library).
declare const window: any;
declare const document: any;
type HTMLCanvasElement = any;

describe('flight recorder on a docker sandbox', { timeout: 900_000 }, () => {
  const config = settings({ geometry: `${WIDTH}x${HEIGHT}` });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const leaseDir = mkdtempSync(join(tmpdir(), 'botscreen-leases-'));
  const runner = new AgentActionRunner(controller, new LeaseStore(leaseDir, config.workspaceKey), testLog);
  const root = mkdtempSync(join(tmpdir(), `botscreen-recorder-${tag}-`));
  const shots: { t: number; png: Uint8Array }[] = [];
  let recorder: RecorderProcess | undefined;
  let bounded: RecorderProcess | undefined;
  let live: RecorderProcess | undefined;
  let container = '';
  let display: string[] = [];

  const inSandbox = (...argv: string[]) => sh('docker', ['exec', '-u', 'pn', container, 'env', ...display, ...argv]);
  const done = (result: ActionResult, what: string) => {
    assert.equal(result.status, 'done', `${what}: ${JSON.stringify(result)}`);
    return result as Extract<ActionResult, { status: 'done' }>;
  };
  /** The pointer goes to a corner and the screen settles, then a live screenshot: its PNG and the time it shows. */
  const stillShot = async (): Promise<{ t: number; png: Uint8Array }> => {
    done(await runner.perform('move', { x: WIDTH - 1, y: HEIGHT - 1 }), 'move to the corner');
    await sleep(2500);
    const before = Date.now();
    const shot = done(await runner.perform('screenshot', {}), 'screenshot').screenshot!;
    return { t: Math.round((before + Date.now()) / 2), png: shot.png };
  };

  after(async () => {
    await Promise.all([recorder?.dispose(), bounded?.dispose(), live?.dispose()]);
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    rmSync(leaseDir, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  });

  test('records two minutes of a terminal flood and 20 agent actions; a bounded recorder stays under 8 MB', async () => {
    done(await runner.perform('screenshot', {}), 'start the screen');
    container = controller.status.sandbox!.id;
    const env = controller.status.screen!.env;
    display = [`DISPLAY=${env.DISPLAY}`, `XAUTHORITY=${env.XAUTHORITY}`];
    const trigger = `/tmp/flood-${tag}`;
    // A terminal that prints random text while the trigger file exists, and is still otherwise.
    sh('docker', ['exec', '-d', '-u', 'pn', container, 'env', ...display, 'xfce4-terminal', '--disable-server', '--maximize', `--title=flood-${tag}`,
      '-x', 'bash', '-c', `while :; do if [ -e ${trigger} ]; then head -c 3000 /dev/urandom | base64; else sleep 0.05; fi; done`]);
    await waitFor(() => inSandbox('xdotool', 'search', '--onlyvisible', '--name', `^flood-${tag}$`).trim() !== '', 20_000, 100, 'flood terminal');
    await sleep(1500);

    const events: string[] = [];
    // Bound high enough that nothing of the two minutes is dropped (the flood is ~50 MB a minute).
    // The recorder as the extension runs it: in its own process (dist/recorder.js).
    recorder = recorderProcess(controller, { dir: join(root, 'main'), screenId: config.workspaceKey, maxBytes: 1024 * 1024 * 1024 });
    bounded = recorderProcess(controller, { dir: join(root, 'bounded'), screenId: config.workspaceKey, maxBytes: BOUND_MB * 1024 * 1024 });
    const watch = runner.onDidPerform((action, result) => {
      if (result.status === 'done' && action.kind !== 'screenshot') {
        recorder!.event(actionEvent(action));
        events.push(action.kind);
      }
    });
    recorder.start();
    bounded.start();
    let worst = 0;
    /** Every bounded segment file seen, with the largest size seen (what went through the ring). */
    const seen = new Map<string, number>();
    const sizes = setInterval(() => {
      const segments = listSegments(join(root, 'bounded'));
      segments.forEach((s) => seen.set(s.path, Math.max(s.bytes, seen.get(s.path) ?? 0)));
      worst = Math.max(worst, segments.reduce((sum, s) => sum + s.bytes, 0));
    }, 200);
    await sleep(2000);

    const started = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      sh('docker', ['exec', container, 'touch', trigger]);
      // Pointer actions while the flood runs (the pointer stays over the terminal: no menu opens).
      done(await runner.perform('move', { x: 100 + round * 60, y: 200 + (round % 5) * 50 }), 'move');
      await sleep(3000);
      done(await runner.perform('click', { x: 150 + round * 50, y: 300, button: 'left' }), 'click');
      await sleep(3000);
      sh('docker', ['exec', container, 'rm', '-f', trigger]);
      shots.push(await stillShot());
      await sleep(500);
    }
    const elapsed = Date.now() - started;
    watch.dispose();
    clearInterval(sizes);
    await Promise.all([recorder.dispose(), bounded.dispose()]);
    console.log(`# recorded ${Math.round(elapsed / 1000)} s, ${events.length} agent actions`);
    assert.ok(elapsed >= 105_000, `about two minutes (${elapsed} ms)`);
    assert.equal(events.length, 3 * ROUNDS, 'three pointer actions a round (36: more than the 20 asked for)');

    const boundedSegments = listSegments(join(root, 'bounded'));
    const total = boundedSegments.reduce((sum, s) => sum + s.bytes, 0);
    console.log(`# bounded recorder: ${seen.size} segments written, ${boundedSegments.length} kept, ${(total / 1024 / 1024).toFixed(1)} MB on disk, worst ${(worst / 1024 / 1024).toFixed(1)} MB`);
    assert.ok(worst <= BOUND_MB * 1024 * 1024, `never above ${BOUND_MB} MB (worst ${worst})`);
    const through = [...seen.values()].reduce((sum, bytes) => sum + bytes, 0);
    assert.ok(through > 2 * BOUND_MB * 1024 * 1024, `more than twice the bound went through the ring (${through} bytes): it wrapped`);
    assert.ok(seen.size > boundedSegments.length, 'oldest segments were dropped');
    const summary = recordingOf(root, 'main')!;
    const { records } = readScreenRecording(summary);
    const timeline = timelineOf(records);
    console.log(`# main recording: ${summary.segments.length} segments, ${(summary.bytes / 1024 / 1024).toFixed(1)} MB`);
    assert.ok(timeline.segments.length >= 4, `a segment at least every 30 s (${timeline.segments.length})`);
    assert.ok(timeline.segments.every((s) => s.keyframe !== undefined), 'every segment has its keyframe');
    for (let i = 1; i < timeline.segments.length; i++) {
      assert.ok(timeline.segments[i].keyframe! - timeline.segments[i - 1].keyframe! <= 31_000, 'keyframes at most ~30 s apart');
    }
    assert.equal(timeline.events.length, events.length, 'every action is on the timeline');

  });

  test('replay in noVNC draws what the live screenshots showed at their times (seek latency logged), and exports a WebM ffprobe reads', async () => {
    assert.equal(shots.length, ROUNDS, 'the recording test ran');
    const summary = recordingOf(root, 'main')!;
    const startedAt = summary.startedAt;
    const replay = await openReplay(summary.segments.map((s) => s.path));
    const { page } = replay;
    try {
      assert.equal(await page.locator('#marks .mark.action').count(), 3 * ROUNDS, 'each action is marked on the timeline');
      const seek = (t: number) => replay.seek(t, { pixels: true });

      const latencies: number[] = [];
      const live = shots.map((shot) => pngPixels(shot.png));
      // Out of order, so each seek goes back or forth across segments.
      const order = shots.map((_, i) => i).sort((a, b) => ((a * 7) % ROUNDS) - ((b * 7) % ROUNDS));
      for (const i of order) {
        const drawn = await seek(shots[i].t - startedAt);
        latencies.push(drawn.ms);
        assert.equal(drawn.width, WIDTH);
        assert.equal(drawn.height, HEIGHT);
        const same = differing(live[i].rgb, drawn.rgba!);
        const other = differing(live[(i + 1) % ROUNDS].rgb, drawn.rgba!);
        console.log(`# shot ${i} at ${shots[i].t - startedAt} ms: ${(100 * same).toFixed(2)}% pixels differ from its live screenshot, ${(100 * other).toFixed(1)}% from the next; seek ${drawn.ms} ms (${drawn.where})`);
        assert.ok(same < 0.01, `replay matches the live screenshot ${i} (${(100 * same).toFixed(2)}% of pixels differ)`);
        assert.ok(other > 0.01 && other > 3 * same, `and not the next one (${(100 * other).toFixed(2)}%): the seek landed on its own frame`);
      }
      latencies.sort((a, b) => a - b);
      console.log(`# seek latency over ${Math.round((shots.at(-1)!.t - startedAt) / 1000)} s: median ${latencies[latencies.length >> 1]} ms, max ${latencies.at(-1)} ms`);

      // Next action jumps to the first action after the position.
      await seek(0);
      await page.click('#next-action');
      const first = timelineOf(readScreenRecording(summary).records).events[0].t;
      await page.waitForFunction((at) => (document.getElementById('output') as HTMLCanvasElement).dataset.t === String(at), first, { timeout: 10_000 });

      // WebM: the last 6 s, played at 1×.
      const duration = Number(await page.evaluate(() => document.body.dataset.duration));
      await seek(duration - 6000);
      await page.evaluate(() => window.postMessage({ type: 'exportVideo' }, '*'));
      const video = await page.waitForFunction(
        () => {
          const message = (window as unknown as { posted: { type: string; data: Uint8Array; durationMs: number }[] }).posted.find((m) => m.type === 'video');
          if (!message) {
            return undefined;
          }
          let binary = '';
          for (let i = 0; i < message.data.length; i += 0x8000) {
            binary += String.fromCharCode(...message.data.subarray(i, i + 0x8000));
          }
          return { base64: btoa(binary), durationMs: message.durationMs };
        },
        undefined,
        { timeout: 60_000, polling: 500 },
      );
      const { base64, durationMs } = (await video.jsonValue())!;
      const file = join(root, 'export.webm');
      writeFileSync(file, Buffer.from(base64, 'base64'));
      const probe = JSON.parse(
        execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height:format=format_name,duration', '-of', 'json', file], { encoding: 'utf8' }),
      ) as { streams: { codec_name: string; width: number; height: number }[]; format: { format_name: string; duration?: string } };
      console.log(`# webm: ${JSON.stringify(probe)}, played ${Math.round(durationMs)} ms`);
      assert.match(probe.format.format_name, /webm/);
      assert.equal(probe.streams[0].width, WIDTH);
      assert.equal(probe.streams[0].height, HEIGHT);
      const seconds = Number(probe.format.duration);
      assert.ok(Math.abs(seconds - 6) < 1.5, `duration ${seconds} s is the 6 s played`);
    } finally {
      await replay.close();
    }
  });

  test('a replay opened on a recording still being written follows it: seeking and playing from Live show frames recorded after it opened', async () => {
    assert.ok(container, 'the recording test ran');
    const dir = join(root, 'live');
    const trigger = `/tmp/flood-${tag}`;
    // Short segments, so new segment files come while the replay is open (as well as appended bytes).
    live = recorderProcess(controller, { dir, screenId: config.workspaceKey, maxBytes: 1024 * 1024 * 1024, segmentMs: 4000 });
    live.start();
    await waitFor(() => (recordingOf(root, 'live') ? timelineOf(readScreenRecording(recordingOf(root, 'live')!).records).segments.some((s) => s.keyframe !== undefined) : false), 20_000, 200, 'the first keyframe');
    await sleep(1000);
    const opened = recordingOf(root, 'live')!;
    const replay = await openReplay(opened.segments.map((s) => s.path), undefined, dir);
    const { page } = replay;
    /** A burst of the flood, then a still screen with the pointer in its corner, shot live. */
    const burst = async () => {
      sh('docker', ['exec', container, 'touch', trigger]);
      await sleep(3000);
      sh('docker', ['exec', container, 'rm', '-f', trigger]);
      const shot = await stillShot();
      return { t: shot.t - opened.startedAt, pixels: pngPixels(shot.png) };
    };
    const canvasPixels = () =>
      page.evaluate(() => {
        const canvas = document.getElementById('output') as HTMLCanvasElement;
        const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
        let binary = '';
        for (let i = 0; i < data.data.length; i += 0x8000) {
          binary += String.fromCharCode(...data.data.subarray(i, i + 0x8000));
        }
        return btoa(binary);
      });
    try {
      const atOpen = Number(await page.evaluate(() => document.body.dataset.duration));
      const first = (await replay.seek(atOpen, { pixels: true })).rgba!;

      const shot = await burst();
      await page.waitForFunction((at) => Number(document.body.dataset.duration) >= at, shot.t + 300, { timeout: 20_000 });
      const grown = Number(await page.evaluate(() => document.body.dataset.duration));
      console.log(`# live replay: ${atOpen} ms recorded when it opened (${opened.segments.length} files), ${grown} ms after the burst (${listSegments(dir).length} files)`);
      assert.ok(listSegments(dir).length > opened.segments.length, 'segment files were started after the replay opened');
      const drawn = await replay.seek(shot.t, { pixels: true });
      const same = differing(shot.pixels.rgb, drawn.rgba!);
      const old = differing(shot.pixels.rgb, first);
      console.log(`# seek to ${shot.t} ms (${drawn.where}): ${(100 * same).toFixed(2)}% pixels differ from the live screenshot, ${(100 * old).toFixed(1)}% for the picture at opening`);
      assert.ok(same < 0.01, `the replay shows the frame recorded after it opened (${(100 * same).toFixed(2)}% differ)`);
      assert.ok(old > 0.01 && old > 3 * same, `which the recording at opening did not have (${(100 * old).toFixed(1)}% differ)`);

      // Live: to the end, playing; the next burst is drawn as it comes, without a seek.
      await page.click('#live');
      await page.waitForFunction(() => (document.getElementById('output') as HTMLCanvasElement).dataset.playing === 'true', undefined, { timeout: 5000 });
      const next = await burst();
      await page.waitForFunction(
        (at) => {
          const canvas = document.getElementById('output') as HTMLCanvasElement;
          return Number(canvas.dataset.t) >= at && canvas.dataset.drawn === 'true';
        },
        next.t,
        { timeout: 20_000 },
      );
      assert.equal(await page.evaluate(() => (document.getElementById('output') as HTMLCanvasElement).dataset.playing), 'true', 'still playing at the end: following');
      const followed = differing(next.pixels.rgb, Buffer.from(await canvasPixels(), 'base64'));
      const previous = differing(next.pixels.rgb, drawn.rgba!);
      console.log(`# live end: ${(100 * followed).toFixed(2)}% pixels differ from the latest live screenshot, ${(100 * previous).toFixed(1)}% for the burst before`);
      assert.ok(followed < 0.01, `playing at the live end shows the latest frame (${(100 * followed).toFixed(2)}% differ)`);
      assert.ok(previous > 0.01 && previous > 3 * followed, `not the one before (${(100 * previous).toFixed(1)}% differ)`);
    } finally {
      await replay.close();
      await live.dispose();
    }
  });
});
