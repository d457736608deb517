// The flight recorder of one running screen: its own view-only RFB connection (./recorderRfb.ts)
// through one more relay exec, the server's bytes appended as they arrive to segment files on
// disk (./recordingFormat.ts), a new connection (segment) at most every 30 s once the screen changed
// so replay can start anywhere near, and a ring buffer that drops the oldest segments to stay under
// its bound.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentAction } from './actions/catalog';
import type { Logger } from './logger';
import { RfbProtocolError, RfbStreamFeeder, MSG_SERVER_CUT_TEXT } from './recorderRfb';
import { updateRequest } from './rfbClientMessages';
import { encodeHeader, encodeRecord, encodeRecordHeader, jsonPayload, RecordType, RECORDING_FORMAT, RECORDING_VERSION, type TimelineEvent } from './recordingFormat';
import type { StreamProcess } from './runner';

export const SEGMENT_SUFFIX = '.bsrec';

export interface RecorderOptions {
  /** The screen's own directory of segment files (created when missing). */
  readonly dir: string;
  readonly screenId: string;
  /** A relay to the screen's RFB socket that does not count as a viewer's activity. */
  readonly openRelay: () => StreamProcess;
  /** The ring buffer's bound in bytes, for every segment file of this screen together. */
  readonly maxBytes: number;
  readonly log: Logger;
  /**
   * A new segment starts after this long (the keyframe interval), once the screen changed since
   * the current one's keyframe: an unchanged screen keeps its segment (and its relay) however long.
   */
  readonly segmentMs?: number;
  /** The fastest the recorder asks for updates (its own frame rate cap) while nobody watches. */
  readonly minUpdateIntervalMs?: number;
  /** …and while a viewer watches the screen (`setWatched`). */
  readonly watchedUpdateIntervalMs?: number;
  /** After a segment failed, the next starts this long later (tests shorten it). */
  readonly retryMs?: number;
  /**
   * Whether segments reach the disk: why not, from the first that could not be written until a
   * later one's keyframe is written (the recorder runs on, but records nothing meanwhile).
   */
  readonly writeTrouble?: (why: string | undefined) => void;
  readonly now?: () => number;
}

export const DEFAULT_SEGMENT_MS = 30_000;
/**
 * 5 updates a second: Xvnc encodes the recorder's stream on the sandbox's CPU beside the viewers',
 * and at 10 a second a full-screen terminal flood cost a viewer 30-40 % of its frames on a 2-core
 * machine (test/bench/recorder.bench.ts).
 */
const DEFAULT_MIN_UPDATE_INTERVAL_MS = 200;
/**
 * 1 update a second while a viewer watches: each update of the recorder's stream costs Xvnc the
 * same encoding work whatever the rate, and at 5 a second it still took about a fifth of a
 * flooding viewer's frames. What the person sees comes first; the recording is coarser meanwhile.
 */
const DEFAULT_WATCHED_UPDATE_INTERVAL_MS = 1_000;
/** A segment is also rotated once it holds this share of the bound, so several always fit. */
const SEGMENT_SHARE = 4;
/**
 * …or this much: to seek, replay decodes the segment from its start up to the time shown, and
 * noVNC in a webview decodes a full-screen terminal flood at about 3-4 MB/s on a loaded 2-core
 * machine. A segment outgrows this by what comes until the next one's keyframe (4 MB made 5 MB
 * segments and 1.6 s seeks); 2 MB keeps seeks under a second. The extra keyframes cost most
 * while nobody watches (the recorder's densest stream); while a viewer watches, the recorder's
 * stream is a fifth as dense, so they are few.
 */
const SEGMENT_MAX_BYTES = 2 * 1024 * 1024;
/** After a connection failed, the next try waits this long. */
const RETRY_MS = 5_000;

/** A segment file of the ring buffer, as found on disk. */
export interface SegmentFile {
  readonly path: string;
  readonly startedAt: number;
  readonly seq: number;
  readonly bytes: number;
}

export function segmentFileName(startedAt: number, seq: number): string {
  return `seg-${startedAt}-${String(seq).padStart(6, '0')}${SEGMENT_SUFFIX}`;
}

/** The segment files of a screen's directory, oldest first. */
export function listSegments(dir: string): SegmentFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const segments: SegmentFile[] = [];
  for (const name of names) {
    const match = /^seg-(\d+)-(\d+)\.bsrec$/.exec(name);
    if (!match) {
      continue;
    }
    const file = path.join(dir, name);
    try {
      segments.push({ path: file, startedAt: Number(match[1]), seq: Number(match[2]), bytes: fs.statSync(file).size });
    } catch {
      // removed meanwhile
    }
  }
  return segments.sort((a, b) => a.startedAt - b.startedAt || a.seq - b.seq);
}

/** One RFB connection and the file its bytes go to. */
class Segment {
  readonly startedAt: number;
  readonly path: string;
  bytes = 0;
  hasKeyframe = false;
  /** Timeline events written into it. */
  events = 0;
  /** An update came after the keyframe: the screen changed since. */
  changed = false;
  private readonly relay: StreamProcess;
  private readonly feeder: RfbStreamFeeder;
  private out: fs.WriteStream | undefined;
  /** Bytes that came before ServerInit gave the size the header needs. */
  private early: Uint8Array[] = [];
  private width = 0;
  private height = 0;
  /** The chunk being fed, its stretches kept so far, and where the stretch being kept starts (-1: none). */
  private chunk: Uint8Array = new Uint8Array(0);
  private kept: Uint8Array[] = [];
  private keptFrom = 0;
  /** Inside a clipboard message (which may span chunks). */
  private dropping = false;
  private lastRequest = 0;
  private requestTimer: NodeJS.Timeout | undefined;
  private ended = false;
  private outgoing: Uint8Array[] = [];

  constructor(
    private readonly owner: Recorder,
    readonly seq: number,
  ) {
    this.startedAt = owner.now();
    this.path = path.join(owner.options.dir, segmentFileName(this.startedAt, seq));
    this.relay = owner.options.openRelay();
    this.feeder = new RfbStreamFeeder({
      send: (bytes) => this.toServer(bytes),
      ready: (width, height) => this.ready(width, height),
      messageStart: (type) => this.messageStart(type),
      messageEnd: (type) => this.messageEnd(type),
      updateEnd: (pixels) => this.updateEnd(pixels),
      resized: (width, height) => {
        this.width = width;
        this.height = height;
      },
    });
    this.relay.stdout.on('data', (chunk: Buffer) => this.data(chunk));
    void this.relay.exited.then(({ exitCode, stderr }) => {
      if (!this.ended) {
        owner.segmentFailed(this, `relay exited with ${exitCode}${stderr ? `: ${stderr.trim()}` : ''}`);
      }
    });
  }

  /** Appends a timeline event to this segment's file. */
  event(event: TimelineEvent): void {
    this.events++;
    this.write(encodeRecord(RecordType.Event, this.owner.now() - this.startedAt, jsonPayload(event)));
  }

  end(): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    clearTimeout(this.requestTimer);
    this.relay.kill();
    this.out?.end();
  }

  private data(chunk: Buffer): void {
    if (this.ended) {
      return;
    }
    const t = this.owner.now() - this.startedAt;
    this.chunk = chunk;
    this.kept = [];
    this.keptFrom = this.dropping ? -1 : 0;
    try {
      this.feeder.feed(chunk);
    } catch (err) {
      this.owner.segmentFailed(this, err instanceof RfbProtocolError ? err.message : String(err));
      return;
    }
    if (this.keptFrom >= 0) {
      this.kept.push(chunk.subarray(this.keptFrom));
    }
    for (const bytes of this.kept) {
      if (bytes.length > 0) {
        this.rfb(t, bytes);
      }
    }
  }

  /** Clipboard text is not part of the picture: its messages are left out of the recording. */
  private messageStart(type: number): void {
    if (type === MSG_SERVER_CUT_TEXT) {
      if (this.keptFrom >= 0) {
        this.kept.push(this.chunk.subarray(this.keptFrom, this.feeder.position - 1));
      }
      this.dropping = true;
      this.keptFrom = -1;
    }
  }

  private messageEnd(type: number): void {
    if (type === MSG_SERVER_CUT_TEXT) {
      this.dropping = false;
      this.keptFrom = this.feeder.position;
    }
  }

  private rfb(t: number, bytes: Uint8Array): void {
    // A stream's chunks are never reused: kept as they are, not copied.
    if (!this.out) {
      this.early.push(bytes);
      return;
    }
    this.write(encodeRecordHeader(RecordType.Rfb, t, bytes.length), bytes);
  }

  private ready(width: number, height: number): void {
    this.width = width;
    this.height = height;
    const cannotWrite = (err: unknown) => {
      const why = `cannot write ${this.path}: ${err instanceof Error ? err.message : String(err)}`;
      this.owner.setWriteTrouble(why);
      this.owner.segmentFailed(this, why);
    };
    // Opened now, not when the stream gets round to it: a segment closed (and its file removed)
    // before an asynchronous open completed would have its file created after the removal.
    let fd: number;
    try {
      fd = fs.openSync(this.path, 'wx', 0o600);
    } catch (err) {
      // Told after the parser returns: the recorder replaces this segment, not from inside its parse.
      queueMicrotask(() => cannotWrite(err));
      return;
    }
    this.out = fs.createWriteStream(this.path, { fd });
    this.out.on('error', cannotWrite);
    this.write(
      encodeHeader({ format: RECORDING_FORMAT, version: RECORDING_VERSION, startedAt: this.startedAt, screenId: this.owner.options.screenId, width, height }),
      encodeRecord(RecordType.SegmentStart, 0, jsonPayload({ width, height })),
    );
    const t = this.owner.now() - this.startedAt;
    for (const bytes of this.early.splice(0)) {
      this.write(encodeRecordHeader(RecordType.Rfb, t, bytes.length), bytes);
    }
    // The keyframe: the whole screen, however little changed.
    this.request(false);
  }

  private updateEnd(pixels: boolean): void {
    if (!this.hasKeyframe && !pixels) {
      // Xvnc answers a full request with an update holding only the ExtendedDesktopSize, and
      // keeps the whole screen marked changed for the next request: asked for at once, not at
      // the frame cap. Marking the keyframe here let replay start from a black screen, and ended
      // the previous segment before this one had a picture.
      this.request(true);
      return;
    }
    if (!this.hasKeyframe) {
      this.hasKeyframe = true;
      this.write(encodeRecord(RecordType.Keyframe, this.owner.now() - this.startedAt, new Uint8Array(0)));
      // On disk (the stream writes in order): the recorder writes again.
      this.out?.write(new Uint8Array(0), (err) => err || this.owner.setWriteTrouble(undefined));
      this.owner.keyframe(this);
    } else if (!this.changed) {
      // Xvnc answers an incremental request only once something changed.
      this.changed = true;
      this.owner.changed(this);
    }
    this.scheduleRequest();
  }

  /** The next incremental request: not sooner than the frame cap, and only once the disk keeps up. */
  private scheduleRequest(): void {
    const wait = Math.max(0, this.lastRequest + this.owner.minUpdateIntervalMs - this.owner.now());
    const go = () => {
      if (this.out?.writableNeedDrain) {
        this.out.once('drain', () => this.request(true));
      } else {
        this.request(true);
      }
    };
    if (wait === 0) {
      go();
    } else {
      this.requestTimer = setTimeout(go, wait);
    }
  }

  private request(incremental: boolean): void {
    if (this.ended) {
      return;
    }
    this.lastRequest = this.owner.now();
    this.toServer(updateRequest(incremental, this.width, this.height));
  }

  /**
   * Writes to the server after the parser returns: a relay that answers at once (a pipe in the
   * same process) must not feed the parser while it runs. Order is kept.
   */
  private toServer(bytes: Uint8Array): void {
    this.outgoing.push(bytes);
    if (this.outgoing.length === 1) {
      queueMicrotask(() => {
        for (const part of this.outgoing.splice(0)) {
          if (!this.ended) {
            this.relay.stdin.write(part);
          }
        }
      });
    }
  }

  private write(...parts: Uint8Array[]): void {
    if (!this.out || this.ended) {
      return;
    }
    for (const part of parts) {
      this.out.write(part);
      this.bytes += part.length;
    }
    this.owner.wrote(this);
  }
}

/**
 * Records one running screen from `start` until disposed. A pause is a dispose (the window's
 * recorder process ends, ./recorderProcess.ts), and a resume a new recorder over the same
 * directory: what was recorded before stays, and the next segment follows it.
 */
export class Recorder {
  private watched = false;
  readonly now: () => number;
  private current: Segment | undefined;
  /** The previous segment, kept until the current one has its keyframe. */
  private previous: Segment | undefined;
  /** Closed segment files, oldest first (this session's and earlier ones). */
  private closed: SegmentFile[];
  /** The closed segments' bytes together (kept, not summed on every write). */
  private closedBytes: number;
  /** A segment is rotated once it holds this much. */
  private readonly segmentMaxBytes: number;
  private seq = 0;
  private rotateTimer: NodeJS.Timeout | undefined;
  /** The current segment is old enough to rotate, and rotates at the screen's first change. */
  private rotateDue = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private recording = false;
  private readonly segmentMs: number;
  private readonly retryMs: number;
  /** Why segments do not reach the disk now (`RecorderOptions.writeTrouble`). */
  private trouble: string | undefined;

  constructor(readonly options: RecorderOptions) {
    this.now = options.now ?? Date.now;
    this.segmentMs = options.segmentMs ?? DEFAULT_SEGMENT_MS;
    this.retryMs = options.retryMs ?? RETRY_MS;
    fs.mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    this.closed = listSegments(options.dir);
    this.closedBytes = this.closed.reduce((sum, segment) => sum + segment.bytes, 0);
    this.segmentMaxBytes = Math.min(options.maxBytes / SEGMENT_SHARE, SEGMENT_MAX_BYTES);
    this.seq = this.closed.reduce((max, segment) => Math.max(max, segment.seq + 1), 0);
  }

  /** The fastest the recorder asks for updates now. */
  get minUpdateIntervalMs(): number {
    return this.watched
      ? (this.options.watchedUpdateIntervalMs ?? DEFAULT_WATCHED_UPDATE_INTERVAL_MS)
      : (this.options.minUpdateIntervalMs ?? DEFAULT_MIN_UPDATE_INTERVAL_MS);
  }

  /** Whether a viewer watches the screen: the recorder then asks for fewer updates. */
  setWatched(watched: boolean): void {
    this.watched = watched;
  }

  start(): void {
    if (!this.recording) {
      this.recording = true;
      this.rotate();
    }
  }

  /** Ends every connection and closes the files; nothing more is written. */
  dispose(): void {
    this.recording = false;
    this.stopAll();
  }

  /** A timeline event, into the segment being recorded (dropped when none is). */
  event(event: TimelineEvent): void {
    (this.current?.hasKeyframe ? this.current : (this.previous ?? this.current))?.event(event);
  }

  /** Bytes on disk now: closed segments and the open ones. */
  totalBytes(): number {
    return this.closedBytes + (this.current?.bytes ?? 0) + (this.previous?.bytes ?? 0);
  }

  // --- called by segments ---

  /** Told when segments stop reaching the disk (the first why) and when they reach it again. */
  setWriteTrouble(why: string | undefined): void {
    if ((why === undefined) !== (this.trouble === undefined)) {
      this.trouble = why;
      this.options.writeTrouble?.(why);
    }
  }

  wrote(segment: Segment): void {
    if (segment === this.current && segment.hasKeyframe && segment.bytes > this.segmentMaxBytes && !this.previous) {
      this.rotate();
    }
    this.enforceBound();
  }

  /** The segment's screen changed for the first time since its keyframe. */
  changed(segment: Segment): void {
    if (segment === this.current && this.rotateDue) {
      this.rotate();
    }
  }

  keyframe(segment: Segment): void {
    if (segment === this.current && this.previous) {
      this.close(this.previous);
      this.previous = undefined;
    }
  }

  segmentFailed(segment: Segment, why: string): void {
    if (segment !== this.current && segment !== this.previous) {
      return;
    }
    this.options.log.warn(`recorder: ${why}`);
    this.close(segment);
    if (segment === this.previous) {
      this.previous = undefined;
      return;
    }
    this.current = this.previous;
    this.previous = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.recording && this.rotate(), this.retryMs);
  }

  // --- internals ---

  /** Starts the next segment; the one recording now goes on until the new one has its keyframe. */
  private rotate(): void {
    clearTimeout(this.rotateTimer);
    this.rotateDue = false;
    if (!this.recording) {
      return;
    }
    if (this.previous) {
      // The last rotation never reached its keyframe: give up on the older one.
      this.close(this.previous);
    }
    this.previous = this.current;
    try {
      this.current = new Segment(this, this.seq++);
    } catch (err) {
      // No relay for the new segment: the one before it (if any) goes on until the retry.
      this.options.log.warn(`recorder: cannot open a relay: ${String(err)}`);
      this.current = this.previous;
      this.previous = undefined;
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.recording && this.rotate(), this.retryMs);
      return;
    }
    const started = this.current;
    this.rotateTimer = setTimeout(() => {
      if (this.current === started && !started.hasKeyframe) {
        // A connection that drew no full screen in a whole segment's time is replaced.
        this.segmentFailed(started, 'no full screen update within a segment');
      } else if (this.current?.hasKeyframe && !this.current.changed) {
        // Nothing changed since its keyframe: a new connection would record the same picture
        // again. The segment goes on (seeking into it starts from its keyframe) until a change.
        this.rotateDue = true;
      } else {
        this.rotate();
      }
    }, this.segmentMs);
  }

  private close(segment: Segment): void {
    segment.end();
    // A segment that never drew the whole screen cannot be replayed from anywhere: without a
    // timeline event of its own it is nothing but a black picture at the recording's end.
    if (segment.bytes > 0 && (segment.hasKeyframe || segment.events > 0)) {
      this.closed.push({ path: segment.path, startedAt: segment.startedAt, seq: segment.seq, bytes: segment.bytes });
      this.closedBytes += segment.bytes;
    } else {
      removeQuietly(segment.path);
    }
    this.enforceBound();
  }

  private stopAll(): void {
    clearTimeout(this.rotateTimer);
    clearTimeout(this.retryTimer);
    for (const segment of [this.previous, this.current]) {
      if (segment) {
        this.close(segment);
      }
    }
    this.previous = this.current = undefined;
  }

  /** Drops the oldest closed segments until everything fits the bound. */
  private enforceBound(): void {
    while (this.closed.length > 0 && this.totalBytes() > this.options.maxBytes) {
      const oldest = this.closed.shift()!;
      this.closedBytes -= oldest.bytes;
      removeQuietly(oldest.path);
    }
  }
}

/**
 * Removes a segment file that may not be there: `force` ignores only a missing file, and a
 * directory that became unusable (ENOTDIR, EACCES) must not end the recorder from inside a timer.
 */
function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // the segment's directory is what fails, and the write trouble already says so
  }
}

/** A short label of an action for the timeline; typed text is not written out (the screen shows it). */
export function actionLabel(action: AgentAction): string {
  switch (action.kind) {
    case 'click':
      return `${action.double ? 'double-click' : 'click'} ${action.button} ${action.at.x},${action.at.y}`;
    case 'move':
      return `move ${action.at.x},${action.at.y}`;
    case 'drag':
      return `drag ${action.from.x},${action.from.y} → ${action.to.x},${action.to.y}`;
    case 'scroll':
      return `scroll ${action.direction} ×${action.amount} at ${action.at.x},${action.at.y}`;
    case 'type':
      return `type ${[...action.text].length} characters`;
    case 'key':
      return `key ${action.chord}`;
    case 'openUrl':
      return `open ${action.url}`;
    case 'wait':
      return `wait ${action.seconds} s`;
    case 'screenshot':
      return 'screenshot';
  }
}

export function actionEvent(action: AgentAction): TimelineEvent {
  return { kind: 'action', what: action.kind, label: actionLabel(action) };
}
