// The flight recorder's file format (docs/recording-format.md), version 1: a header, then
// records of RFB server bytes, segment starts, keyframes and timeline events. One format for a
// segment file in the ring buffer and for an exported recording; no `vscode` and no DOM here, so
// the extension host, the replay webview and the tests share it.

/** The eight bytes every recording file starts with. */
export const RECORDING_MAGIC = 'BOTSCREC';
export const RECORDING_FORMAT = 'botscreen-recording';
export const RECORDING_VERSION = 1;

/** What a record holds (its type byte). */
export const enum RecordType {
  /** A new RFB connection starts here: a decoder must be reset; payload JSON {width, height}. */
  SegmentStart = 1,
  /** Server-to-client RFB bytes of the current connection, exactly as received. */
  Rfb = 2,
  /** A timeline event; payload JSON (TimelineEvent). */
  Event = 3,
  /** The connection's first full-screen update ends here: replay may start at this record. */
  Keyframe = 4,
}

export interface RecordingHeader {
  readonly format: typeof RECORDING_FORMAT;
  readonly version: number;
  /** Wall-clock time (ms since the epoch) that record times count from. */
  readonly startedAt: number;
  /** The screen the recording is of (the workspace key that names its sandbox). */
  readonly screenId: string;
  readonly width: number;
  readonly height: number;
}

/** An agent action or a change of control, as the timeline marks it. */
export interface TimelineEvent {
  readonly kind: 'action' | 'control';
  /** The action's kind (click, type…) or the new holder (agent, human, none). */
  readonly what: string;
  /** A short description, shown on the timeline. */
  readonly label: string;
}

export interface RecordingRecord {
  readonly type: RecordType;
  /** Milliseconds since the header's startedAt. */
  readonly t: number;
  readonly payload: Uint8Array;
}

/** type u8, t_ms u32 (big-endian), length u32 (big-endian). */
export const RECORD_HEADER_BYTES = 9;
/** A record's time is a u32 of milliseconds: a file spans at most ~49 days. */
const MAX_T = 0xffffffff;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The file's opening bytes: magic, header length (u32 big-endian), header JSON. */
export function encodeHeader(header: RecordingHeader): Uint8Array {
  const json = encoder.encode(JSON.stringify(header));
  const out = new Uint8Array(8 + 4 + json.length);
  out.set(encoder.encode(RECORDING_MAGIC), 0);
  new DataView(out.buffer).setUint32(8, json.length);
  out.set(json, 12);
  return out;
}

/** One record's bytes. */
export function encodeRecord(type: RecordType, t: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(RECORD_HEADER_BYTES + payload.length);
  writeRecordHeader(out, type, t, payload.length);
  out.set(payload, RECORD_HEADER_BYTES);
  return out;
}

/** A record's nine header bytes alone (the writer sends large payloads without copying them). */
export function encodeRecordHeader(type: RecordType, t: number, length: number): Uint8Array {
  const out = new Uint8Array(RECORD_HEADER_BYTES);
  writeRecordHeader(out, type, t, length);
  return out;
}

function writeRecordHeader(out: Uint8Array, type: RecordType, t: number, length: number): void {
  const view = new DataView(out.buffer, out.byteOffset, RECORD_HEADER_BYTES);
  view.setUint8(0, type);
  view.setUint32(1, Math.min(MAX_T, Math.max(0, Math.round(t))));
  view.setUint32(5, length);
}

export function jsonPayload(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function parseJsonPayload<T>(payload: Uint8Array): T {
  return JSON.parse(decoder.decode(payload)) as T;
}

export class RecordingFormatError extends Error {}

/**
 * Reads a whole recording file: its header and every complete record. A file cut short (the
 * recorder was writing it when the host died) yields the records before the cut.
 */
export function readRecording(bytes: Uint8Array): { readonly header: RecordingHeader; readonly records: RecordingRecord[]; readonly truncated: boolean } {
  const opening = readHeader(bytes);
  if (!opening) {
    throw new RecordingFormatError(bytes.length < 12 ? 'not a Bot Screen recording' : 'the recording header is cut short');
  }
  const { records, end } = readRecords(bytes, opening.end);
  return { header: opening.header, records, truncated: end !== bytes.length };
}

/** The header at the start of `bytes`, and where it ends; undefined while it is incomplete. */
function readHeader(bytes: Uint8Array): { readonly header: RecordingHeader; readonly end: number } | undefined {
  if (bytes.length >= 8 && decoder.decode(bytes.subarray(0, 8)) !== RECORDING_MAGIC) {
    throw new RecordingFormatError('not a Bot Screen recording');
  }
  if (bytes.length < 12) {
    return undefined;
  }
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(8);
  if (12 + headerLength > bytes.length) {
    return undefined;
  }
  const header = JSON.parse(decoder.decode(bytes.subarray(12, 12 + headerLength))) as RecordingHeader;
  if (header.format !== RECORDING_FORMAT) {
    throw new RecordingFormatError(`unknown format ${String(header.format)}`);
  }
  if (header.version !== RECORDING_VERSION) {
    throw new RecordingFormatError(`recording version ${String(header.version)} is not supported (this reader knows ${RECORDING_VERSION})`);
  }
  return { header, end: 12 + headerLength };
}

/** The complete records of `bytes` from `offset` on, and where the last one ends. */
function readRecords(bytes: Uint8Array, offset: number): { readonly records: RecordingRecord[]; readonly end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: RecordingRecord[] = [];
  while (offset + RECORD_HEADER_BYTES <= bytes.length) {
    const type = view.getUint8(offset) as RecordType;
    const t = view.getUint32(offset + 1);
    const length = view.getUint32(offset + 5);
    const start = offset + RECORD_HEADER_BYTES;
    if (start + length > bytes.length) {
      break;
    }
    records.push({ type, t, payload: bytes.subarray(start, start + length) });
    offset = start + length;
  }
  return { records, end: offset };
}

/**
 * Reads a recording file as it grows (a segment the recorder is still writing): each `push` gets
 * the bytes appended since the last one and returns the records they complete; a record cut by
 * the end of a push waits for its rest. Nothing read before is parsed again.
 */
export class RecordingTail {
  header: RecordingHeader | undefined;
  private rest: Uint8Array = new Uint8Array(0);

  push(bytes: Uint8Array): RecordingRecord[] {
    let data = bytes;
    if (this.rest.length > 0) {
      data = new Uint8Array(this.rest.length + bytes.length);
      data.set(this.rest);
      data.set(bytes, this.rest.length);
    }
    let offset = 0;
    if (!this.header) {
      const opening = readHeader(data);
      if (!opening) {
        this.rest = data;
        return [];
      }
      this.header = opening.header;
      offset = opening.end;
    }
    const { records, end } = readRecords(data, offset);
    this.rest = data.subarray(end);
    return records;
  }
}

/** A self-contained stretch of a recording: one RFB connection, drawable from its keyframe on. */
export interface Segment {
  /** Time (in the recording's clock) of the segment start record. */
  readonly start: number;
  /**
   * Time of its keyframe; undefined when the connection ended before its first full update (or
   * has not drawn it yet, or its file was dropped since: replay then skips the segment).
   */
  keyframe: number | undefined;
  /** Its last record's time (it grows while the segment is written). */
  end: number;
  /** Its RFB records, in order. */
  readonly rfb: RecordingRecord[];
}

/** A recording split into segments and timeline events, as replay uses it (it grows with a live recording: extendTimeline). */
export interface Timeline {
  readonly segments: Segment[];
  readonly events: { readonly t: number; readonly event: TimelineEvent }[];
  duration: number;
}

export function timelineOf(records: readonly RecordingRecord[]): Timeline {
  const timeline: Timeline = { segments: [], events: [], duration: 0 };
  extendTimeline(timeline, records);
  return timeline;
}

/**
 * Adds records to a timeline, their times moved by `shift`: a segment start opens a new segment,
 * other records go to the segment `into` (the one a growing file's earlier records went to).
 * Returns the segment the last records went to (undefined: none yet).
 */
export function extendTimeline(timeline: Timeline, records: readonly RecordingRecord[], shift = 0, into?: number): number | undefined {
  let index = into;
  let current = index === undefined ? undefined : timeline.segments[index];
  let unordered = false;
  for (const record of records) {
    const t = record.t + shift;
    timeline.duration = Math.max(timeline.duration, t);
    switch (record.type) {
      case RecordType.SegmentStart:
        current = { start: t, keyframe: undefined, end: t, rfb: [] };
        index = timeline.segments.push(current) - 1;
        break;
      case RecordType.Rfb:
        if (current) {
          current.rfb.push(shift === 0 ? record : { ...record, t });
          current.end = t;
        }
        break;
      case RecordType.Keyframe:
        if (current && current.keyframe === undefined) {
          current.keyframe = t;
        }
        break;
      case RecordType.Event:
        unordered ||= timeline.events.length > 0 && timeline.events[timeline.events.length - 1].t > t;
        timeline.events.push({ t, event: parseJsonPayload<TimelineEvent>(record.payload) });
        break;
    }
  }
  if (unordered) {
    // Two segments written at once (a rotation's overlap) hold events of the same moments.
    timeline.events.sort((a, b) => a.t - b.t);
  }
  return index;
}

/**
 * The segment replay decodes to show time `t`: the last one whose keyframe is at or before `t`
 * (a later segment takes over as soon as it can draw the whole screen), else the first drawable.
 */
export function segmentAt(timeline: Timeline, t: number): number {
  let found = -1;
  timeline.segments.forEach((segment, index) => {
    if (segment.keyframe !== undefined && segment.keyframe <= t) {
      found = index;
    }
  });
  if (found < 0) {
    found = timeline.segments.findIndex((segment) => segment.keyframe !== undefined);
  }
  return found;
}

type RecordingFile = { readonly header: RecordingHeader; readonly records: readonly RecordingRecord[] };

/**
 * Several files (the ring buffer's segment files, oldest first) as one recording: the last
 * header's fields, times rebased to the earliest start. Records stay grouped by file, so times
 * of overlapping segments interleave.
 */
export function mergeRecordings(files: readonly RecordingFile[]): { readonly header: RecordingHeader; readonly records: RecordingRecord[] } {
  if (files.length === 0) {
    throw new RecordingFormatError('nothing recorded');
  }
  const startedAt = Math.min(...files.map((file) => file.header.startedAt));
  const records: RecordingRecord[] = [];
  for (const file of files) {
    const shift = file.header.startedAt - startedAt;
    for (const record of file.records) {
      records.push(shift === 0 ? record : { ...record, t: record.t + shift });
    }
  }
  return { header: { ...files[files.length - 1].header, startedAt }, records };
}

/** The bytes of one file holding several (see mergeRecordings), as parts to write in order. */
export function concatRecordings(files: readonly RecordingFile[]): Uint8Array[] {
  const { header, records } = mergeRecordings(files);
  const parts: Uint8Array[] = [encodeHeader(header)];
  for (const record of records) {
    parts.push(encodeRecordHeader(record.type, record.t, record.payload.length), record.payload);
  }
  return parts;
}
