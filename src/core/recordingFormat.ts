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
  if (bytes.length < 12 || decoder.decode(bytes.subarray(0, 8)) !== RECORDING_MAGIC) {
    throw new RecordingFormatError('not a Bot Screen recording');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(8);
  if (12 + headerLength > bytes.length) {
    throw new RecordingFormatError('the recording header is cut short');
  }
  const header = JSON.parse(decoder.decode(bytes.subarray(12, 12 + headerLength))) as RecordingHeader;
  if (header.format !== RECORDING_FORMAT) {
    throw new RecordingFormatError(`unknown format ${String(header.format)}`);
  }
  if (header.version !== RECORDING_VERSION) {
    throw new RecordingFormatError(`recording version ${String(header.version)} is not supported (this reader knows ${RECORDING_VERSION})`);
  }
  const records: RecordingRecord[] = [];
  let offset = 12 + headerLength;
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
  return { header, records, truncated: offset !== bytes.length };
}

/** A self-contained stretch of a recording: one RFB connection, drawable from its keyframe on. */
export interface Segment {
  /** Time (in the recording's clock) of the segment start record. */
  readonly start: number;
  /** Time of its keyframe; undefined when the connection ended before its first full update. */
  readonly keyframe: number | undefined;
  readonly end: number;
  /** Its RFB records, in order. */
  readonly rfb: RecordingRecord[];
}

/** A recording split into segments and timeline events, as replay uses it. */
export interface Timeline {
  readonly segments: Segment[];
  readonly events: { readonly t: number; readonly event: TimelineEvent }[];
  readonly duration: number;
}

export function timelineOf(records: readonly RecordingRecord[]): Timeline {
  const segments: { start: number; keyframe: number | undefined; end: number; rfb: RecordingRecord[] }[] = [];
  const events: { t: number; event: TimelineEvent }[] = [];
  let current: (typeof segments)[number] | undefined;
  let duration = 0;
  for (const record of records) {
    duration = Math.max(duration, record.t);
    switch (record.type) {
      case RecordType.SegmentStart:
        current = { start: record.t, keyframe: undefined, end: record.t, rfb: [] };
        segments.push(current);
        break;
      case RecordType.Rfb:
        if (current) {
          current.rfb.push(record);
          current.end = record.t;
        }
        break;
      case RecordType.Keyframe:
        if (current && current.keyframe === undefined) {
          current.keyframe = record.t;
        }
        break;
      case RecordType.Event:
        events.push({ t: record.t, event: parseJsonPayload<TimelineEvent>(record.payload) });
        break;
    }
  }
  return { segments, events, duration };
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
