import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { listSegments, Recorder, type RecorderOptions } from '../../src/core/recorder';
import { deleteRecording, exportRecording, followRecording, isScreenId, listRecordings, RecordingFollower, recordingOf, type RecordingGrowth } from '../../src/core/recorderStore';
import { RfbStreamFeeder, setEncodings, setPixelFormat } from '../../src/core/recorderRfb';
import {
  concatRecordings,
  encodeHeader,
  encodeRecord,
  extendTimeline,
  readRecording,
  RecordingTail,
  RecordingFormatError,
  RecordType,
  segmentAt,
  timelineOf,
  type RecordingHeader,
} from '../../src/core/recordingFormat';
import type { StreamProcess } from '../../src/core/runner';
import { withWebmDuration } from '../../webview/webmDuration';
import { cutText, FakeRelay, rect, serverHello, update } from '../support/fakeRfbServer';
import { waitFor } from '../support/process';

const header: RecordingHeader = { format: 'botscreen-recording', version: 1, startedAt: 1_000_000, screenId: 'abc', width: 64, height: 48 };
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Uint8Array.from(Buffer.concat(parts.map((part) => Buffer.from(part))));
}

// --- the file format ---

test('format: header and records read back as written, a cut-short tail is left out', () => {
  const payload = Uint8Array.from([1, 2, 3, 250]);
  const bytes = concat([
    encodeHeader(header),
    encodeRecord(RecordType.SegmentStart, 0, new TextEncoder().encode('{"width":64,"height":48}')),
    encodeRecord(RecordType.Rfb, 17, payload),
    encodeRecord(RecordType.Keyframe, 20, new Uint8Array(0)),
    encodeRecord(RecordType.Event, 4_000_000_000, new TextEncoder().encode('{"kind":"action","what":"click","label":"click 1,2"}')),
  ]);
  const read = readRecording(bytes);
  assert.deepEqual(read.header, header);
  assert.equal(read.truncated, false);
  assert.deepEqual(
    read.records.map((r) => [r.type, r.t, [...r.payload].length]),
    [
      [RecordType.SegmentStart, 0, 24],
      [RecordType.Rfb, 17, 4],
      [RecordType.Keyframe, 20, 0],
      [RecordType.Event, 4_000_000_000, 52],
    ],
  );
  assert.deepEqual([...read.records[1].payload], [1, 2, 3, 250]);
  const cut = readRecording(bytes.subarray(0, bytes.length - 3));
  assert.equal(cut.truncated, true);
  assert.equal(cut.records.length, 3);
});

test('format: another file, another format or a newer version is refused with a reason', () => {
  assert.throws(() => readRecording(new TextEncoder().encode('PNG not a recording')), RecordingFormatError);
  assert.throws(() => readRecording(encodeHeader({ ...header, version: 2 })), /version 2 is not supported/);
  assert.throws(() => readRecording(encodeHeader({ ...header, format: 'other' as 'botscreen-recording' })), /unknown format/);
});

test('format: the timeline splits segments, and seeking picks the last segment drawable at t', () => {
  const empty = new Uint8Array(0);
  const first = readRecording(
    concat([
      encodeHeader(header),
      encodeRecord(RecordType.SegmentStart, 0, empty),
      encodeRecord(RecordType.Rfb, 0, Uint8Array.of(1)),
      encodeRecord(RecordType.Keyframe, 100, empty),
      encodeRecord(RecordType.Event, 500, new TextEncoder().encode('{"kind":"action","what":"type","label":"typing"}')),
      encodeRecord(RecordType.Rfb, 30_500, Uint8Array.of(2)),
    ]),
  );
  const second = readRecording(
    concat([
      encodeHeader({ ...header, startedAt: header.startedAt + 30_000 }),
      encodeRecord(RecordType.SegmentStart, 0, empty),
      encodeRecord(RecordType.Rfb, 0, Uint8Array.of(3)),
      encodeRecord(RecordType.Keyframe, 200, empty),
      encodeRecord(RecordType.Event, 1000, new TextEncoder().encode('{"kind":"control","what":"human","label":"a person took control"}')),
    ]),
  );
  const joined = readRecording(concat(concatRecordings([first, second])));
  assert.equal(joined.header.startedAt, header.startedAt);
  const timeline = timelineOf(joined.records);
  assert.equal(timeline.segments.length, 2);
  assert.deepEqual(
    timeline.segments.map((s) => [s.start, s.keyframe, s.end, s.rfb.length]),
    [
      [0, 100, 30_500, 2],
      [30_000, 30_200, 30_000, 1],
    ],
  );
  assert.deepEqual(
    timeline.events.map((e) => [e.t, e.event.what]),
    [
      [500, 'type'],
      [31_000, 'human'],
    ],
  );
  assert.equal(timeline.duration, 31_000);
  assert.equal(segmentAt(timeline, 0), 0, 'before any keyframe: the first drawable segment');
  assert.equal(segmentAt(timeline, 30_199), 0);
  assert.equal(segmentAt(timeline, 30_200), 1);
  assert.throws(() => concatRecordings([]), /nothing recorded/);
});

test('format: a file read as it grows gives each record once, however its bytes are cut, and the timeline grows with it', () => {
  const empty = new Uint8Array(0);
  const whole = concat([
    encodeHeader(header),
    encodeRecord(RecordType.SegmentStart, 0, empty),
    encodeRecord(RecordType.Rfb, 10, Uint8Array.of(1, 2, 3)),
    encodeRecord(RecordType.Keyframe, 20, empty),
    encodeRecord(RecordType.Rfb, 400, Uint8Array.of(4)),
    encodeRecord(RecordType.Event, 900, new TextEncoder().encode('{"kind":"action","what":"click","label":"click"}')),
    encodeRecord(RecordType.Rfb, 1500, Uint8Array.of(5, 6)),
  ]);
  for (const cuts of [[5], [12, 13], [40, 41, 42, 60], [whole.length - 1], Array.from({ length: whole.length - 1 }, (_, i) => i + 1)]) {
    const tail = new RecordingTail();
    const timeline = timelineOf([]);
    let into: number | undefined;
    let from = 0;
    const seen: number[] = [];
    for (const at of [...cuts, whole.length]) {
      const records = tail.push(whole.slice(from, at));
      from = at;
      seen.push(...records.map((r) => r.t));
      // Shifted as a file that started 2 s after the recording's clock.
      into = extendTimeline(timeline, records, 2000, into);
    }
    assert.deepEqual(seen, [0, 10, 20, 400, 900, 1500], `cut at ${cuts.slice(0, 5).join(',')}…`);
    assert.equal(tail.header?.startedAt, header.startedAt);
    assert.equal(timeline.segments.length, 1);
    assert.deepEqual(timeline.segments[0].rfb.map((r) => r.t), [2010, 2400, 3500]);
    assert.equal(timeline.segments[0].keyframe, 2020);
    assert.deepEqual(timeline.events.map((e) => e.t), [2900]);
    assert.equal(timeline.duration, 3500);
  }
  assert.throws(() => new RecordingTail().push(new TextEncoder().encode('NOTAREC!xxxx')), RecordingFormatError);
});

// --- the RFB client ---

/** Every Tight kind the parser must size, plus ZRLE, Raw, CopyRect, a resize and LastRect. */
function richUpdate(): Buffer {
  const zrle = Buffer.alloc(4 + 300);
  zrle.writeUInt32BE(300, 0);
  return update(
    rect(0, 0, 10, 10, 7, Buffer.from([0x80, 1, 2, 3])), // fill
    rect(0, 0, 10, 10, 7, Buffer.concat([Buffer.from([0x90, 0x81, 0x01]), Buffer.alloc(129, 7)])), // JPEG, 2-byte length
    rect(0, 0, 2, 1, 7, Buffer.concat([Buffer.from([0x00]), Buffer.alloc(6, 9)])), // basic copy, 6 raw bytes
    rect(0, 0, 16, 2, 7, Buffer.concat([Buffer.from([0x40, 1, 1]), Buffer.alloc(6, 1), Buffer.alloc(4, 2)])), // 2-colour palette: 2×2 raw bytes
    rect(0, 0, 20, 20, 7, Buffer.concat([Buffer.from([0x40, 1, 3]), Buffer.alloc(12, 1), Buffer.from([0x85, 0x80, 0x01]), Buffer.alloc(16389, 3)])), // 4-colour palette, 3-byte length
    rect(0, 0, 20, 20, 7, Buffer.concat([Buffer.from([0x40, 2]), Buffer.from([0x20]), Buffer.alloc(32, 4)])), // gradient
    rect(0, 0, 1, 1, 16, zrle),
    rect(0, 0, 2, 2, 0, Buffer.alloc(16, 5)),
    rect(1, 1, 2, 2, 1, Buffer.alloc(4)),
    rect(0, 0, 80, 60, -308, Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.alloc(16)])),
    rect(0, 0, 0, 0, -224),
  );
}

function feedInPieces(feeder: RfbStreamFeeder, bytes: Buffer, sizes: readonly number[]): void {
  let at = 0;
  let i = 0;
  while (at < bytes.length) {
    const n = sizes[i++ % sizes.length];
    feeder.feed(bytes.subarray(at, at + n));
    at += n;
  }
}

test('rfb client: answers the handshake as a shared client, asks for noVNC\'s pixel format, and frames every message however the stream is cut', () => {
  for (const sizes of [[1], [3, 7, 1], [100_000], [13, 4096]]) {
    const sent: Buffer[] = [];
    const seen: string[] = [];
    const feeder = new RfbStreamFeeder({
      send: (bytes) => sent.push(Buffer.from(bytes)),
      ready: (w, h) => seen.push(`ready ${w}x${h}`),
      messageStart: (type) => seen.push(`start ${type}`),
      messageEnd: (type) => seen.push(`end ${type}`),
      updateEnd: () => seen.push('update'),
      resized: (w, h) => seen.push(`resized ${w}x${h}`),
    });
    const stream = Buffer.concat([serverHello(64, 48), richUpdate(), Buffer.from([2]), cutText('secret'), update(rect(0, 0, 1, 1, 0, Buffer.alloc(4)))]);
    feedInPieces(feeder, stream, sizes);
    assert.deepEqual(
      seen,
      ['ready 64x48', 'start 0', 'resized 80x60', 'end 0', 'update', 'start 2', 'end 2', 'start 3', 'end 3', 'start 0', 'end 0', 'update'],
      `pieces ${sizes.join(',')}`,
    );
    assert.deepEqual(
      sent.map((b) => [...b]),
      [[...Buffer.from('RFB 003.008\n')], [1], [1], [...setPixelFormat()], [...setEncodings()]],
    );
  }
});

test('rfb client: the pixel format is the one noVNC sends (32 bpp, depth 24, little-endian, RGB at 0/8/16)', () => {
  assert.deepEqual([...setPixelFormat()], [0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0]);
  const encodings = Buffer.from(setEncodings());
  const list = Array.from({ length: encodings.readUInt16BE(2) }, (_, i) => encodings.readInt32BE(4 + 4 * i));
  assert.ok(!list.includes(-239), 'no cursor pseudo-encoding: the server draws the pointer into the recording');
  assert.ok(!list.includes(-312) && !list.includes(-313), 'nothing that needs an answer');
});

test('rfb client: a server without security type None, or an unknown message, fails with a reason', () => {
  const events = { send() {}, ready() {}, messageStart() {}, messageEnd() {}, updateEnd() {}, resized() {} };
  assert.throws(() => new RfbStreamFeeder(events).feed(Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1, 2])])), /no security type/);
  assert.throws(() => new RfbStreamFeeder(events).feed(Buffer.concat([serverHello(4, 4), Buffer.from([77])])), /unexpected server message 77/);
  assert.throws(() => new RfbStreamFeeder(events).feed(Buffer.from('HTTP/1.1 200')), /unsupported server version/);
});

// --- the recorder with an in-process RFB server on a relay's pipes ---

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-recorder-unit-'));
}

test('recorder: segments rotate with a keyframe each, clipboard text is left out, and no input message is ever sent', async () => {
  const dir = tempDir();
  const relays: FakeRelay[] = [];
  const recorder = new Recorder({
    dir,
    screenId: 'abc',
    maxBytes: 64 * 1024 * 1024,
    segmentMs: 150,
    minUpdateIntervalMs: 10,
    log: silent,
    openRelay: () => {
      const relay = new FakeRelay(1000);
      relays.push(relay);
      return relay as unknown as StreamProcess;
    },
  });
  recorder.start();
  await sleep(200);
  recorder.event({ kind: 'action', what: 'click', label: 'click at 3, 4' });
  await sleep(300);
  recorder.dispose();
  await sleep(50);
  assert.ok(relays.length >= 3, `rotated: ${relays.length} connections`);
  assert.ok(relays.every((relay) => relay.killed), 'every connection was ended');
  for (const relay of relays) {
    assert.deepEqual([...new Set(relay.clientTypes)].sort(), [0, 2, 3], 'SetPixelFormat, SetEncodings and requests only');
    assert.equal(relay.requests[0], false, 'each connection starts with a full (non-incremental) update');
    assert.ok(relay.requests.slice(1).every(Boolean), 'then incremental ones');
  }
  const segments = listSegments(dir);
  assert.ok(segments.length >= 3);
  let events = 0;
  for (const segment of segments) {
    const bytes = fs.readFileSync(segment.path);
    assert.equal((fs.statSync(segment.path).mode & 0o777).toString(8), '600');
    assert.ok(!bytes.includes('my password'), 'clipboard text is not recorded');
    const { header: h, records } = readRecording(bytes);
    assert.equal(h.width, 64);
    assert.equal(records[0].type, RecordType.SegmentStart);
    const timeline = timelineOf(records);
    assert.equal(timeline.segments.length, 1);
    assert.notEqual(timeline.segments[0].keyframe, undefined, 'each segment has its keyframe');
    // The recorded stream is what noVNC reads: banner first, then the same messages, byte-exact.
    const stream = Buffer.concat(timeline.segments[0].rfb.map((r) => Buffer.from(r.payload)));
    assert.equal(stream.subarray(0, 12).toString(), 'RFB 003.008\n');
    const check = new RfbStreamFeeder({ send() {}, ready() {}, messageStart: (type) => assert.notEqual(type, 3), messageEnd() {}, updateEnd() {}, resized() {} });
    check.feed(stream);
    events += timeline.events.length;
  }
  assert.equal(events, 1, 'the event is in exactly one segment');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A recorder on fake relays (one per connection, all showing `screen`), 100 ms segments. */
function fakeRecorder(
  screenId: string,
  screen: ConstructorParameters<typeof FakeRelay>[1],
  more: Partial<RecorderOptions> = {},
): { dir: string; relays: FakeRelay[]; recorder: Recorder } {
  const dir = tempDir();
  const relays: FakeRelay[] = [];
  const recorder = new Recorder({
    dir,
    screenId,
    maxBytes: 64 * 1024 * 1024,
    segmentMs: 100,
    minUpdateIntervalMs: 10,
    log: silent,
    ...more,
    openRelay: () => {
      const relay = new FakeRelay(1000, screen);
      relays.push(relay);
      return relay as unknown as StreamProcess;
    },
  });
  return { dir, relays, recorder };
}

test('recorder: a still screen keeps its segment and its one connection; the first change after the interval rotates', async () => {
  const screen = { still: true };
  const { dir, relays, recorder } = fakeRecorder('still', screen);
  recorder.start();
  // Five keyframe intervals of a still screen.
  await sleep(500);
  assert.equal(relays.length, 1, 'no new connection while nothing changes');
  assert.equal(listSegments(dir).length, 1, 'one segment');
  assert.deepEqual(relays[0].requests, [false, true], 'the keyframe, then one incremental request waiting for a change');
  recorder.event({ kind: 'action', what: 'wait', label: 'wait 1 s' });
  // A change: the segment is old enough, so the next one starts with its keyframe.
  relays[0].change();
  await sleep(50);
  assert.equal(relays.length, 2, 'the change started a new segment');
  assert.ok(relays[0].killed, 'the old connection ended once the new keyframe was on disk');
  // Still again: the new segment stays, whatever the interval.
  await sleep(400);
  assert.equal(relays.length, 2, 'still again: no new connection');
  recorder.dispose();
  await sleep(30);
  const segments = listSegments(dir);
  assert.equal(segments.length, 2);
  const first = timelineOf(readRecording(fs.readFileSync(segments[0].path)).records);
  // Seeking anywhere in the long still segment decodes from its keyframe at its start.
  assert.ok(first.segments[0].keyframe! < 250, `keyframe at ${first.segments[0].keyframe} ms`);
  assert.equal(first.events.length, 1, 'the event recorded into the still segment');
  assert.ok(first.events[0].t >= 450, `at its time (${first.events[0].t} ms)`);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('recorder: an update with only the screen layout is no keyframe; a segment stopped before its picture leaves no file', async () => {
  const screen = { layoutFirst: true, holdPicture: false };
  const { dir, relays, recorder } = fakeRecorder('layout', screen);
  recorder.start();
  await sleep(50);
  assert.deepEqual(relays[0].requests.slice(0, 2), [false, true], 'the full request, then one at once for the picture the layout came without');
  // The next rotation's picture is held: the first segment goes on meanwhile, and the screen
  // stops (the recorder is disposed) before the picture comes.
  screen.holdPicture = true;
  await sleep(120);
  assert.equal(relays.length, 2, 'rotated');
  assert.equal(relays[0].killed, false, 'the segment before goes on: the new one has only the layout');
  recorder.dispose();
  await sleep(30);
  const segments = listSegments(dir);
  assert.equal(segments.length, 1, `only the segment with a picture stays: ${segments.map((s) => path.basename(s.path)).join(', ')}`);
  const { records } = readRecording(fs.readFileSync(segments[0].path));
  const timeline = timelineOf(records);
  const keyframe = timeline.segments[0].keyframe!;
  // Replay from the keyframe draws the picture: the ZRLE rectangle comes before the marker.
  const beforeKeyframe = Buffer.concat(timeline.segments[0].rfb.filter((r) => r.t <= keyframe).map((r) => Buffer.from(r.payload)));
  let pictures = 0;
  new RfbStreamFeeder({ send() {}, ready() {}, messageStart() {}, messageEnd() {}, updateEnd: (pixels) => void (pixels && pictures++), resized() {} }).feed(beforeKeyframe);
  assert.equal(pictures, 1, 'the keyframe comes after the first update with pixels');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('recorder: segments that cannot be written are told (the recorder runs on and retries), and told again once one is on disk', async (t) => {
  const troubles: (string | undefined)[] = [];
  const { dir, recorder } = fakeRecorder('trouble', { still: true }, { retryMs: 100, writeTrouble: (why) => troubles.push(why) });
  t.after(() => {
    recorder.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // The screen's directory gone and a file in its place: no segment file can be made there.
  fs.rmSync(dir, { recursive: true, force: true });
  fs.writeFileSync(dir, 'not a directory');
  recorder.start();
  await waitFor(() => troubles.length >= 1, 5000, 20, 'the trouble told');
  assert.match(troubles[0]!, /cannot write .*ENOTDIR/);
  await sleep(350);
  assert.equal(troubles.length, 1, 'told once while it lasts, however many segments fail');
  // The directory back: the next try writes its keyframe, and that is told.
  fs.rmSync(dir);
  fs.mkdirSync(dir);
  await waitFor(() => troubles.length >= 2, 5000, 20, 'the recovery told');
  assert.equal(troubles[1], undefined);
  assert.ok(listSegments(dir).length >= 1, 'segments on disk again');
});

test('recorder: while a viewer watches it asks for fewer updates, and for more again once nobody does', async () => {
  const dir = tempDir();
  const relays: FakeRelay[] = [];
  const recorder = new Recorder({
    dir,
    screenId: 'watched',
    maxBytes: 64 * 1024 * 1024,
    minUpdateIntervalMs: 10,
    watchedUpdateIntervalMs: 100,
    log: silent,
    openRelay: () => {
      const relay = new FakeRelay(100);
      relays.push(relay);
      return relay as unknown as StreamProcess;
    },
  });
  const requestsIn = async (ms: number) => {
    const before = relays.reduce((n, relay) => n + relay.requests.length, 0);
    await sleep(ms);
    return relays.reduce((n, relay) => n + relay.requests.length, 0) - before;
  };
  recorder.start();
  await sleep(50);
  const alone = await requestsIn(500);
  recorder.setWatched(true);
  await sleep(150);
  const watched = await requestsIn(500);
  recorder.setWatched(false);
  await sleep(50);
  const againAlone = await requestsIn(500);
  recorder.dispose();
  // 10 ms apart alone: dozens in half a second; 100 ms apart watched: at most 6.
  assert.ok(watched <= 6, `watched: ${watched} requests in 500 ms`);
  assert.ok(alone >= 4 * watched && againAlone >= 4 * watched, `alone ${alone}, watched ${watched}, alone again ${againAlone}`);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('recorder: the ring buffer stays under its bound and drops the oldest segments first', async () => {
  const dir = tempDir();
  // An earlier session's segment, older than anything recorded now: dropped first.
  const old = path.join(dir, 'seg-1000-000000.bsrec');
  fs.writeFileSync(old, Buffer.alloc(100_000));
  const maxBytes = 400_000;
  let worst = 0;
  const recorder = new Recorder({
    dir,
    screenId: 'abc',
    maxBytes,
    segmentMs: 60_000,
    minUpdateIntervalMs: 0,
    log: silent,
    openRelay: () => new FakeRelay(20_000) as unknown as StreamProcess,
  });
  recorder.start();
  const timer = setInterval(() => {
    worst = Math.max(worst, listSegments(dir).reduce((sum, s) => sum + s.bytes, 0), recorder.totalBytes());
  }, 5);
  await sleep(700);
  recorder.dispose();
  clearInterval(timer);
  await sleep(50);
  const segments = listSegments(dir);
  assert.ok(!fs.existsSync(old), 'the oldest segment went first');
  assert.ok(segments.length >= 2, `segments rotated by size: ${segments.length}`);
  const total = segments.reduce((sum, s) => sum + s.bytes, 0);
  assert.ok(total <= maxBytes, `on disk ${total} <= ${maxBytes}`);
  assert.ok(worst <= maxBytes, `never above the bound: ${worst}`);
  // It wrapped: far more went through than the bound holds.
  assert.ok(segments[segments.length - 1].seq >= 4, `wrapped (last seq ${segments[segments.length - 1].seq})`);
  fs.rmSync(dir, { recursive: true, force: true });
});

// --- the WebM export's duration ---

test('webm: the duration is written into Segment Info, with an unknown or a known segment size', () => {
  const ebmlHeader = Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x84, 0x42, 0x86, 0x81, 0x01]);
  const info = Buffer.from([0x15, 0x49, 0xa9, 0x66, 0x88, 0x2a, 0xd7, 0xb1, 0x83, 0x0f, 0x42, 0x40, 0x00].slice(0, 13));
  // Info: TimecodeScale 1000000 (3 bytes), size 7 → fix the size byte.
  info[4] = 0x80 | 7;
  const cluster = Buffer.from([0x1f, 0x43, 0xb6, 0x75, 0x82, 0xe7, 0x80]);
  for (const known of [false, true]) {
    const segmentSize = known ? Buffer.from([0x80 | (info.length - 1 + cluster.length)]) : Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    const body = Buffer.concat([info.subarray(0, 12), cluster]);
    if (known) {
      segmentSize[0] = 0x80 | body.length;
    }
    const file = Buffer.concat([ebmlHeader, Buffer.from([0x18, 0x53, 0x80, 0x67]), segmentSize, body]);
    const out = Buffer.from(withWebmDuration(file, 6123.5));
    const at = out.indexOf(Buffer.from([0x44, 0x89, 0x88]));
    assert.ok(at > 0, 'a Duration element');
    assert.equal(out.readDoubleBE(at + 3), 6123.5);
    assert.ok(out.subarray(at + 11).equals(cluster), 'the clusters follow unchanged');
    const infoAt = out.indexOf(Buffer.from([0x15, 0x49, 0xa9, 0x66]));
    assert.deepEqual([...out.subarray(infoAt + 4, infoAt + 12)], [1, 0, 0, 0, 0, 0, 0, 7 + 11], 'Info grew by the element');
    if (known) {
      const sizeAt = out.indexOf(Buffer.from([0x18, 0x53, 0x80, 0x67])) + 4;
      assert.equal(out.readUInt32BE(sizeAt + 4), body.length + 11 + 7, 'the known segment size grew by the element and the longer Info size');
    }
    assert.equal(Buffer.from(withWebmDuration(out, 1)).length, out.length, 'a file with a duration is left alone');
  }
  assert.deepEqual([...withWebmDuration(Uint8Array.of(1, 2, 3), 5)], [1, 2, 3], 'not a WebM: unchanged');
});

// --- the store: list, export, delete ---

test('store: a follower reads only what segment files gained since, new files whole, and names the dropped ones', () => {
  const dir = tempDir();
  const a = path.join(dir, 'seg-1000-000000.bsrec');
  const b = path.join(dir, 'seg-2000-000001.bsrec');
  const c = path.join(dir, 'seg-3000-000002.bsrec');
  fs.writeFileSync(a, Buffer.from('aaaa'));
  fs.writeFileSync(b, Buffer.from('bbbbbb'));
  // The replay read all of a, and b as it was at 4 bytes.
  const follower = new RecordingFollower(dir, [
    { name: path.basename(a), bytes: 4 },
    { name: path.basename(b), bytes: 4 },
  ]);
  const first = follower.poll();
  assert.deepEqual(first.appended.map(({ name, bytes }) => [name, Buffer.from(bytes).toString()]), [[path.basename(b), 'bb']]);
  assert.deepEqual(first.dropped, []);
  assert.deepEqual(follower.poll().appended, [], 'nothing new: nothing read');
  fs.appendFileSync(b, 'BB');
  fs.writeFileSync(c, Buffer.from('cc'));
  fs.rmSync(a);
  const second = follower.poll();
  assert.deepEqual(
    second.appended.map(({ name, bytes }) => [name, Buffer.from(bytes).toString()]),
    [
      [path.basename(b), 'BB'],
      [path.basename(c), 'cc'],
    ],
  );
  assert.deepEqual(second.dropped, [path.basename(a)]);
  assert.deepEqual(follower.poll(), { appended: [], dropped: [] });
  fs.rmSync(dir, { recursive: true, force: true });
});

test('store: following a recording reads on file events, not a timer: at most once per interval, and only while visible', async () => {
  const dir = tempDir();
  const a = path.join(dir, 'seg-1000-000000.bsrec');
  fs.writeFileSync(a, Buffer.from('aaaa'));
  const got: RecordingGrowth[] = [];
  let visible = true;
  const follow = followRecording(dir, [{ name: path.basename(a), bytes: 4 }], (growth) => got.push(growth), { visible: () => visible, intervalMs: 200 });
  try {
    // Nothing written: nothing sent, however long (a still screen costs nothing).
    await sleep(500);
    assert.equal(got.length, 0, 'nothing sent while nothing changed');
    fs.appendFileSync(a, 'b');
    await sleep(100);
    assert.deepEqual(got.map((g) => g.appended.map(({ bytes }) => Buffer.from(bytes).toString())), [['b']], 'a change is read at once');
    // Writes in quick succession: read again only after the interval, all of them together.
    fs.appendFileSync(a, 'c');
    fs.appendFileSync(a, 'd');
    await sleep(50);
    assert.equal(got.length, 1, 'not before the interval');
    await sleep(250);
    assert.deepEqual(got.map((g) => g.appended.map(({ bytes }) => Buffer.from(bytes).toString()).join('')), ['b', 'cd']);
    // Hidden: nothing read; shown, what came meanwhile comes at once (with a new file).
    visible = false;
    await sleep(250);
    fs.appendFileSync(a, 'e');
    fs.writeFileSync(path.join(dir, 'seg-2000-000001.bsrec'), 'ff');
    fs.writeFileSync(path.join(dir, 'not-a-segment'), 'x');
    await sleep(300);
    assert.equal(got.length, 2, 'nothing read while hidden');
    visible = true;
    follow.shown();
    assert.deepEqual(got[2].appended.map(({ name, bytes }) => `${name}:${Buffer.from(bytes).toString()}`), ['seg-1000-000000.bsrec:e', 'seg-2000-000001.bsrec:ff']);
  } finally {
    follow.dispose();
  }
  // Disposed: nothing more.
  fs.appendFileSync(a, 'g');
  await sleep(300);
  assert.equal(got.length, 3, 'nothing after dispose');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('store: recordings are listed per screen, exported as one readable file, and deleted; a path is no screen id', async () => {
  const root = tempDir();
  for (const screenId of ['aaa111', 'bbb222']) {
    const recorder = new Recorder({
      dir: path.join(root, screenId),
      screenId,
      maxBytes: 64 * 1024 * 1024,
      segmentMs: 100,
      minUpdateIntervalMs: 10,
      log: silent,
      openRelay: () => new FakeRelay(500) as unknown as StreamProcess,
    });
    recorder.start();
    await sleep(250);
    recorder.event({ kind: 'control', what: 'human', label: 'a person took control' });
    await sleep(100);
    recorder.dispose();
  }
  await sleep(50);
  fs.mkdirSync(path.join(root, 'empty'));
  const all = listRecordings(root);
  assert.deepEqual(all.map((r) => r.screenId).sort(), ['aaa111', 'bbb222'], 'screens with segments only');
  const one = recordingOf(root, 'aaa111')!;
  assert.ok(one.segments.length >= 2);
  assert.equal(one.bytes, one.segments.reduce((sum, s) => sum + s.bytes, 0));
  const target = path.join(root, 'export.bsrec');
  const written = exportRecording(one, target);
  assert.equal(fs.statSync(target).size, written);
  const exported = readRecording(fs.readFileSync(target));
  assert.equal(exported.header.startedAt, one.segments[0].startedAt);
  const timeline = timelineOf(exported.records);
  assert.equal(timeline.segments.length, one.segments.length, 'every segment, in one file');
  assert.equal(timeline.events.length, 1);
  deleteRecording(root, 'aaa111');
  assert.equal(recordingOf(root, 'aaa111'), undefined);
  assert.ok(recordingOf(root, 'bbb222'), 'the other screen keeps its recording');
  assert.ok(fs.existsSync(target), 'an export is not part of the ring');
  assert.equal(isScreenId('../etc'), false);
  assert.throws(() => recordingOf(root, '../x'), /not a screen id/);
  fs.rmSync(root, { recursive: true, force: true });
});
