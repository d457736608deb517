// The recorder in its own process (src/core/recorderProcess.ts, the built dist/recorder.js): it
// records over the real relay.py (mux mode) against a small RFB server on a unix socket, puts the
// extension host's timeline events into the recording, closes its files before its dispose
// resolves, and leaves nothing running: not when disposed, not when the extension host's channel
// closes, not when it is killed.
import assert from 'node:assert/strict';
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { listSegments } from '../../src/core/recorder';
import { RecorderProcess, type RecorderInit, type RecorderLoss, type RecorderProcessOptions, type ToRecorder } from '../../src/core/recorderProcess';
import { readScreenRecording, recordingOf } from '../../src/core/recorderStore';
import { readRecording, timelineOf } from '../../src/core/recordingFormat';
import { RELAY_SOURCE } from '../../src/core/relay';
import { serveFakeRfb } from '../support/fakeRfbServer';
import { waitFor } from '../support/process';

const SCRIPT = join(__dirname, '..', '..', '..', 'dist', 'recorder.js');
const silent = process.env.RP_DEBUG ? { debug: console.log, info: console.log, warn: console.log, error: console.log } : { debug() {}, info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const alive = (pid: number | undefined) => {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A recorder process disposed when the test ends, failed or not: a connected child keeps the
 * test's process alive (and the child waits for it), so a failed test would hang the run.
 */
function recorderFor(t: { after(fn: () => void | Promise<void>): void }, options: RecorderProcessOptions, init: RecorderInit): RecorderProcess {
  const recorder = new RecorderProcess(options, init);
  t.after(() => recorder.dispose());
  return recorder;
}

async function setup(t: { after(fn: () => void | Promise<void>): void }) {
  const root = mkdtempSync(join(tmpdir(), 'botscreen-recproc-'));
  const socket = join(root, 'rfb.sock');
  const rfb = await serveFakeRfb(socket, 2000);
  t.after(async () => {
    await rfb.close();
    rmSync(root, { recursive: true, force: true });
  });
  const init = {
    dir: join(root, 'recordings', 'abc'),
    screenId: 'abc',
    maxBytes: 64 * 1024 * 1024,
    command: { command: 'python3', args: ['-c', RELAY_SOURCE, 'mux', socket] },
    // Short segments, yet long enough for a loaded machine to start python3 and reach a keyframe.
    segmentMs: 1500,
    minUpdateIntervalMs: 20,
    watched: false,
  };
  return { root, rfb, init };
}

test('recorder process: records over the real relay, writes the timeline\'s events, and its dispose resolves with the files closed and nothing left running', async (t) => {
  const { root, rfb, init } = await setup(t);
  const exits: Array<{ code: number | null; byOwner: boolean }> = [];
  const recorder = recorderFor(t, { script: SCRIPT, log: silent, relayExited: (code, byOwner) => exits.push({ code, byOwner }) }, init);
  recorder.start();
  await waitFor(() => listSegments(init.dir).length >= 3, 30_000, 20, 'three segments');
  assert.equal(exits.length, 0, 'one relay exec for every segment');
  recorder.event({ kind: 'action', what: 'click', label: 'click left 10,10' });
  await sleep(100);
  // A relay that dies on its own is told to the extension host (the screen then checks its sandbox).
  const relayPid = Number(execFileSync('pgrep', ['-P', String(recorder.pid)], { encoding: 'utf8' }).trim());
  process.kill(relayPid, 'SIGKILL');
  await waitFor(() => exits.length === 1, 5000, 20, 'the relay\'s exit told');
  assert.deepEqual(exits, [{ code: null, byOwner: false }]);
  await recorder.dispose();
  assert.ok(!alive(recorder.pid), 'the process exited before dispose resolved');
  await waitFor(() => rfb.open() === 0, 5000, 20, 'every connection to the screen closed');
  const { records } = readScreenRecording(recordingOf(join(root, 'recordings'), 'abc')!);
  const timeline = timelineOf(records);
  assert.ok(timeline.segments.length >= 3, `segments: ${timeline.segments.length}`);
  assert.ok(timeline.segments.every((s) => s.keyframe !== undefined), 'every segment has its keyframe');
  assert.deepEqual(timeline.events.map((e) => e.event.label), ['click left 10,10'], 'the event is on the timeline');
  // Closed before the process exited: no segment ends in a cut-short record.
  for (const segment of listSegments(init.dir)) {
    assert.equal(readRecording(readFileSync(segment.path)).truncated, false, `${segment.path} ends on a whole record`);
  }
});

test('recorder process: a script that cannot run is reported lost, and its dispose still resolves', async (t) => {
  const { init } = await setup(t);
  const lost: string[] = [];
  const recorder = recorderFor(t, { script: join(init.dir, 'missing.js'), log: silent, lost: (why) => lost.push(why) }, init);
  recorder.start();
  await waitFor(() => lost.length === 1, 10_000, 20, 'reported lost');
  assert.match(lost[0], /code 1.*Cannot find module/s);
  await recorder.dispose();
});

test('recorder process: one that cannot use its directory says why, ends, and is reported lost with that reason', async (t) => {
  const { root, init } = await setup(t);
  writeFileSync(join(root, 'recordings'), 'a file where the recordings directory would be');
  const lost: { why: string; loss: RecorderLoss }[] = [];
  const recorder = recorderFor(t, { script: SCRIPT, log: silent, lost: (why, loss) => lost.push({ why, loss }) }, init);
  recorder.start();
  await waitFor(() => lost.length === 1, 10_000, 20, 'reported lost');
  assert.match(lost[0].loss.failure ?? '', /ENOTDIR|EEXIST/, `the reason it gave: ${JSON.stringify(lost[0].loss)}`);
  assert.equal(lost[0].loss.signal, undefined, 'it ended on its own, not killed');
  assert.equal(alive(recorder.pid), false, 'its process is gone');
  await recorder.dispose();
});

test('recorder process: a resume after a pause (a new process over the same directory) goes on with the next segment', async (t) => {
  const { root, rfb, init } = await setup(t);
  /** Segments with their keyframe on disk (one stopped before it leaves no file). */
  const drawable = () => {
    const summary = recordingOf(join(root, 'recordings'), 'abc');
    return summary ? timelineOf(readScreenRecording(summary).records).segments.filter((s) => s.keyframe !== undefined).length : 0;
  };
  const first = recorderFor(t, { script: SCRIPT, log: silent }, { ...init, segmentMs: 60_000 });
  first.start();
  await waitFor(() => drawable() === 1, 20_000, 20, 'a segment');
  await first.dispose();
  const paused = listSegments(init.dir);
  assert.equal(rfb.open(), 0, 'no connection while paused');
  const second = recorderFor(t, { script: SCRIPT, log: silent }, { ...init, segmentMs: 60_000 });
  second.start();
  await waitFor(() => drawable() === 2, 20_000, 20, 'the next segment');
  await second.dispose();
  const after = listSegments(init.dir);
  assert.deepEqual(after[0], paused[0], 'what was recorded before the pause stays as it was');
  assert.equal(after[1].seq, paused[0].seq + 1);
});

test('recorder process: when the extension host\'s channel closes, it ends its relay and exits', async (t) => {
  const { rfb, init } = await setup(t);
  const child = fork(SCRIPT, [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  t.after(() => child.kill('SIGKILL'));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const send = (message: ToRecorder) => child.send(message);
  send({ t: 'init', ...init });
  send({ t: 'start' });
  await waitFor(() => listSegments(init.dir).length >= 1 && rfb.open() >= 1, 20_000, 20, 'recording');
  child.disconnect();
  await exited;
  await waitFor(() => rfb.open() === 0, 5000, 20, 'its connections closed');
});

test('recorder process: killed, it is reported lost, and its relay ends on its own (its input closed)', async (t) => {
  const { rfb, init } = await setup(t);
  const lost: string[] = [];
  const recorder = recorderFor(t, { script: SCRIPT, log: silent, lost: (why) => lost.push(why) }, init);
  recorder.start();
  await waitFor(() => rfb.open() >= 1, 20_000, 20, 'recording');
  process.kill(recorder.pid!, 'SIGKILL');
  await waitFor(() => lost.length === 1, 5000, 20, 'reported lost');
  assert.match(lost[0], /SIGKILL/);
  await waitFor(() => rfb.open() === 0, 10_000, 20, 'the orphaned relay ended');
  await recorder.dispose();
});
