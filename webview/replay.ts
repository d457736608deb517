// The Open Recording panel's script: plays a flight recording (docs/recording-format.md) with
// noVNC's own decoders, fed from the recorded server bytes through a WebSocket-shaped channel
// (./channel.ts) instead of a relay; play/pause, speed, a scrubbable timeline marked with agent
// actions and control changes, "next action", and export to WebM from the picture it draws. A
// recording still being written grows as the host sends what was appended (followRecording):
// "Live" jumps to its end, and playing at the end keeps following it.
import RFB from '@novnc/novnc';
import type { ReplayHostMessage, ReplayStrings, ReplayWebviewMessage } from '../src/replayProtocol';
import { extendTimeline, RecordingTail, segmentAt, type RecordingRecord, type Timeline } from '../src/core/recordingFormat';
import { createChannel, type ScreenChannel } from './channel';
import { decodeRectsAsBitmaps } from './imageDecode';
import { withWebmDuration } from './webmDuration';

declare function acquireVsCodeApi(): { postMessage(message: ReplayWebviewMessage): void };

const vscode = acquireVsCodeApi();
const post = (message: ReplayWebviewMessage): void => vscode.postMessage(message);

// As in the Screen view (./imageDecode.ts): a long replay decodes as many JPEG rectangles as the
// live screen did, and noVNC's data: URL images grew the renderer without bound.
decodeRectsAsBitmaps((blob) => createImageBitmap(blob));
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const playButton = $<HTMLButtonElement>('play');
const speedSelect = $<HTMLSelectElement>('speed');
const nextButton = $<HTMLButtonElement>('next-action');
const videoButton = $<HTMLButtonElement>('export-video');
const rawButton = $<HTMLButtonElement>('export-raw');
const liveButton = $<HTMLButtonElement>('live');
const scrub = $<HTMLInputElement>('scrub');
const marks = $('marks');
const clock = $('clock');
const status = $('status');
const output = $<HTMLCanvasElement>('output');
const decoderHost = $('decoder');

/**
 * What noVNC keeps private but replay must know: whether what it decoded is drawn, and the
 * canvas it draws into (its back buffer; `flip` copies it to the visible canvas at each update's
 * end, which replay does not need: it copies the back buffer itself, once a frame).
 */
interface NoVncInternals {
  readonly _display: { pending(): boolean; flip(): void; readonly _backbuffer: HTMLCanvasElement; readonly _renderQ: readonly unknown[] };
  readonly _flushing: boolean;
}

function formatTime(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * Decodes the recording up to a time. A segment is one RFB connection: it is decoded from its
 * start by a fresh noVNC session, as fast as noVNC goes, up to the time shown; playing on feeds
 * the records as their times come.
 */
class Player {
  t = 0;
  playing = false;
  speed = 1;
  private segment = -1;
  private fed = 0;
  private rfb: RFB | undefined;
  private channel: ScreenChannel | undefined;
  private lastWall = 0;
  /** Something was fed that the output canvas does not show yet. */
  private dirty = false;
  /** The recording may still grow: playing at its end waits there for more instead of stopping. */
  follow = false;
  /** Called when playing reaches the end (and does not follow it). */
  onEnd: () => void = () => undefined;

  constructor(readonly timeline: Timeline) {}

  get duration(): number {
    return this.timeline.duration;
  }

  /** Shows the picture at `t`: from the segment drawable there, fed without delay up to `t`. */
  seek(t: number): void {
    const target = Math.max(0, Math.min(this.duration, t));
    const index = segmentAt(this.timeline, target);
    if (index < 0) {
      return;
    }
    if (index !== this.segment || target < this.t) {
      this.load(index);
    }
    this.t = target;
    // The picture is copied (and its time published) once drawn, even when nothing new was fed.
    this.dirty = true;
    this.feedTo(Math.max(target, this.timeline.segments[index].keyframe ?? target));
  }

  play(): void {
    if (this.t >= this.duration && !this.follow) {
      this.seek(0);
    }
    this.playing = true;
    this.lastWall = performance.now();
  }

  pause(): void {
    this.playing = false;
  }

  /** One animation frame: advance the clock, feed what is due, copy a finished picture. */
  frame(now: number): void {
    if (this.playing) {
      this.t = Math.min(this.duration, this.t + (now - this.lastWall) * this.speed);
      this.lastWall = now;
      const index = segmentAt(this.timeline, this.t);
      if (index !== this.segment && index >= 0) {
        this.load(index);
      }
      this.feedTo(this.t);
      if (this.t >= this.duration && !(this.follow && !exporting)) {
        this.playing = false;
        this.onEnd();
      }
    }
    if (this.dirty && this.drawn()) {
      this.copy();
    }
  }

  /**
   * Every complete update fed is on noVNC's canvas (no image still decoding, no update waiting
   * for one). Records end anywhere, so the last update may be incomplete: it waits for its rest.
   */
  drawn(): boolean {
    const rfb = this.rfb as unknown as NoVncInternals | undefined;
    return !rfb || (rfb._display._renderQ.length === 0 && !rfb._flushing);
  }

  private load(index: number): void {
    // Disconnecting closes its channel too.
    this.rfb?.disconnect();
    decoderHost.replaceChildren();
    // noVNC's answers (its SetEncodings, requests) have no server to go to: they are dropped.
    this.channel = createChannel('postMessage', () => undefined, () => undefined);
    const rfb = new RFB(decoderHost, this.channel, { shared: true });
    rfb.viewOnly = true;
    rfb.focusOnClick = false;
    rfb.scaleViewport = false;
    // Seeking decodes many updates at once; copying each to a canvas nobody sees cost a full-screen
    // drawImage per update (a third of a seek's time in a terminal flood).
    const display = (rfb as unknown as NoVncInternals)._display;
    display.flip = () => undefined;
    // A terminal flood is mostly JPEG rectangles, which the browser decodes asynchronously; noVNC
    // waits for one update's pictures before it reads the next (a live viewer's backpressure).
    // Replay lets it read on, so the pictures of many updates decode at once; noVNC's render
    // queue still draws them in order.
    display.pending = () => false;
    this.rfb = rfb;
    this.segment = index;
    this.fed = 0;
  }

  private feedTo(t: number): void {
    const records = this.timeline.segments[this.segment]?.rfb ?? [];
    while (this.fed < records.length && records[this.fed].t <= t) {
      this.channel?.deliver(records[this.fed++].payload);
      this.dirty = true;
    }
  }

  private copy(): void {
    const source = (this.rfb as unknown as NoVncInternals | undefined)?._display._backbuffer;
    if (!source || source.width === 0) {
      return;
    }
    if (output.width !== source.width || output.height !== source.height) {
      output.width = source.width;
      output.height = source.height;
    }
    output.getContext('2d')!.drawImage(source, 0, 0);
    this.dirty = false;
    output.dataset.t = String(Math.round(this.t));
    output.dataset.segment = String(this.segment);
    output.dataset.fed = String(this.fed);
  }
}

let player: Player | undefined;
let strings: ReplayStrings | undefined;
let exporting: MediaRecorder | undefined;

function render(): void {
  if (!player || !strings) {
    return;
  }
  playButton.textContent = player.playing ? strings.pause : strings.play;
  clock.textContent = `${formatTime(player.t)} / ${formatTime(player.duration)}`;
  if (document.activeElement !== scrub) {
    scrub.value = String(Math.round(player.t));
  }
  output.dataset.playing = String(player.playing);
  output.dataset.drawn = String(player.drawn());
}

function loop(now: number): void {
  player?.frame(now);
  render();
  requestAnimationFrame(loop);
}

function markTimeline(timeline: Timeline): void {
  marks.replaceChildren();
  for (const { t, event } of timeline.events) {
    const mark = document.createElement('button');
    mark.className = `mark ${event.kind}`;
    mark.style.left = `${(100 * t) / Math.max(1, timeline.duration)}%`;
    mark.title = `${formatTime(t)} ${event.label}`;
    mark.setAttribute('aria-label', mark.title);
    mark.dataset.t = String(t);
    mark.addEventListener('click', () => player?.seek(t));
    marks.append(mark);
  }
}

/** A segment file as read so far: its reader, where its times start, and its segment on the timeline. */
interface LoadedFile {
  readonly tail: RecordingTail;
  shift: number;
  segment: number | undefined;
}

const loaded = new Map<string, LoadedFile>();
let timeline: Timeline | undefined;
/** When the recording's clock starts (ms since the epoch): its oldest file's start at opening. */
let base: number | undefined;

/** Reads a file's next bytes; the records they complete, or undefined for a file that is no recording. */
function read(name: string, bytes: Uint8Array): RecordingRecord[] | undefined {
  let file = loaded.get(name);
  if (!file) {
    file = { tail: new RecordingTail(), shift: 0, segment: undefined };
    loaded.set(name, file);
  }
  try {
    return file.tail.push(bytes);
  } catch {
    loaded.delete(name);
    return undefined;
  }
}

/** Puts a file's new records on the timeline (the first file read sets the clock). */
function place(name: string, records: readonly RecordingRecord[]): void {
  const file = loaded.get(name);
  const header = file?.tail.header;
  if (!file || !header || records.length === 0) {
    return;
  }
  base ??= header.startedAt;
  timeline ??= { segments: [], events: [], duration: 0 };
  file.shift = header.startedAt - base;
  file.segment = extendTimeline(timeline, records, file.shift, file.segment);
}

/** Shows the timeline (its length, marks) after it was made or grew. */
function showTimeline(): void {
  if (!timeline) {
    return;
  }
  if (!player) {
    if (!timeline.segments.some((segment) => segment.keyframe !== undefined)) {
      return;
    }
    player = new Player(timeline);
    player.onEnd = () => exporting?.stop();
    player.follow = following;
    player.seek(0);
    status.textContent = '';
    document.body.dataset.loaded = 'true';
  }
  scrub.max = String(timeline.duration);
  markTimeline(timeline);
  document.body.dataset.duration = String(timeline.duration);
  document.body.dataset.events = String(timeline.events.length);
}

let following = false;

async function load(files: readonly { readonly name: string; readonly url: string }[], live: boolean): Promise<void> {
  following = live;
  liveButton.hidden = !live;
  const got: { name: string; records: RecordingRecord[]; bytes: number }[] = [];
  for (const { name, url } of files) {
    try {
      const response = await fetch(url);
      if (response.ok) {
        const bytes = new Uint8Array(await response.arrayBuffer());
        const records = read(name, bytes);
        if (records) {
          got.push({ name, records, bytes: bytes.length });
        }
      }
    } catch {
      // a segment the ring dropped since the list was made
    }
  }
  // The clock starts at the oldest file's start, whatever order the files came in.
  const starts = [...loaded.values()].flatMap((file) => (file.tail.header ? [file.tail.header.startedAt] : []));
  base = starts.length > 0 ? Math.min(...starts) : undefined;
  got.forEach(({ name, records }) => place(name, records));
  showTimeline();
  if (!player) {
    status.textContent = strings?.empty ?? '';
  }
  if (live) {
    post({ type: 'loaded', files: got.map(({ name, bytes }) => ({ name, bytes })) });
  }
}

/** What a live recording gained: the timeline grows; a player at the end goes on from there. */
function append(name: string, bytes: Uint8Array): void {
  const records = read(name, bytes);
  if (records) {
    place(name, records);
    showTimeline();
  }
}

/** Files the ring dropped: their records are let go, and seeking skips their time. */
function dropped(names: readonly string[]): void {
  for (const name of names) {
    const segment = loaded.get(name)?.segment;
    loaded.delete(name);
    if (timeline && segment !== undefined) {
      timeline.segments[segment].rfb.length = 0;
      timeline.segments[segment].keyframe = undefined;
    }
  }
}

/** Records the picture as it plays from the current position to the end, at the chosen speed. */
function exportVideo(): void {
  if (!player || exporting) {
    return;
  }
  const stream = output.captureStream(30);
  const type = ['video/webm;codecs=vp9', 'video/webm;codecs=vp8', 'video/webm'].find((t) => MediaRecorder.isTypeSupported(t));
  const recorder = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
  const chunks: Blob[] = [];
  const startedAt = performance.now();
  recorder.ondataavailable = (event) => event.data.size > 0 && chunks.push(event.data);
  recorder.onstop = () => {
    exporting = undefined;
    videoButton.disabled = false;
    status.textContent = '';
    const durationMs = performance.now() - startedAt;
    void new Blob(chunks, { type: 'video/webm' })
      .arrayBuffer()
      .then((data) => post({ type: 'video', data: withWebmDuration(new Uint8Array(data), durationMs), durationMs, width: output.width, height: output.height }));
  };
  exporting = recorder;
  videoButton.disabled = true;
  status.textContent = strings?.exporting ?? '';
  recorder.start(1000);
  player.play();
}

playButton.addEventListener('click', () => {
  if (player?.playing) {
    player.pause();
    exporting?.stop();
  } else {
    player?.play();
  }
});
speedSelect.addEventListener('change', () => {
  if (player) {
    player.speed = Number(speedSelect.value);
  }
});
scrub.addEventListener('input', () => player?.seek(Number(scrub.value)));
nextButton.addEventListener('click', () => {
  if (!player) {
    return;
  }
  const next = player.timeline.events.find((e) => e.event.kind === 'action' && e.t > player!.t + 1);
  if (next) {
    player.seek(next.t);
  }
});
videoButton.addEventListener('click', exportVideo);
liveButton.addEventListener('click', () => {
  if (player) {
    player.seek(player.duration);
    player.play();
  }
});
rawButton.addEventListener('click', () => post({ type: 'exportRaw' }));

window.addEventListener('message', (event: MessageEvent<ReplayHostMessage>) => {
  const message = event.data;
  if (message.type === 'load') {
    strings = message.strings;
    void load(message.files, message.live);
  } else if (message.type === 'append') {
    append(message.name, message.bytes);
  } else if (message.type === 'dropped') {
    dropped(message.names);
  } else if (message.type === 'seek') {
    player?.seek(message.t);
  } else if (message.type === 'exportVideo') {
    exportVideo();
  }
});

post({ type: 'ready' });
requestAnimationFrame(loop);
