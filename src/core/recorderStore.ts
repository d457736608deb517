// Where recordings live (one directory of segment files per screen under the extension's
// storage) and what can be done with them there: list, read as one recording, follow while it is
// written, export, delete.
// Free of `vscode`, so the Screens view and the tests list recordings with the same code.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { watchDirectory } from './fileWatch';
import { listSegments, SEGMENT_SUFFIX, type SegmentFile } from './recorder';
import { concatRecordings, mergeRecordings, readRecording, RecordingFormatError, type RecordingHeader, type RecordingRecord } from './recordingFormat';

/** A screen's recording, as a list shows it. */
export interface RecordingSummary {
  readonly screenId: string;
  readonly dir: string;
  readonly segments: readonly SegmentFile[];
  readonly bytes: number;
  /** When its oldest kept segment started (ms since the epoch). */
  readonly startedAt: number;
  /** When its newest segment was last written. */
  readonly updatedAt: number;
}

/** A screen id names a directory: only the workspace keys' characters are accepted. */
export function isScreenId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(value);
}

export function screenDir(root: string, screenId: string): string {
  if (!isScreenId(screenId)) {
    throw new RecordingFormatError(`not a screen id: ${JSON.stringify(screenId)}`);
  }
  return path.join(root, screenId);
}

/** Every screen's recording under `root`, newest first; screens with no segment are left out. */
export function listRecordings(root: string): RecordingSummary[] {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const found: RecordingSummary[] = [];
  for (const screenId of names.filter(isScreenId)) {
    const summary = recordingOf(root, screenId);
    if (summary) {
      found.push(summary);
    }
  }
  return found.sort((a, b) => b.updatedAt - a.updatedAt);
}

/** One screen's recording; undefined when nothing of it is kept. */
export function recordingOf(root: string, screenId: string): RecordingSummary | undefined {
  const dir = screenDir(root, screenId);
  const segments = listSegments(dir);
  if (segments.length === 0) {
    return undefined;
  }
  let updatedAt = segments[segments.length - 1].startedAt;
  try {
    updatedAt = fs.statSync(segments[segments.length - 1].path).mtimeMs;
  } catch {
    // dropped meanwhile: its start will do
  }
  return { screenId, dir, segments, bytes: segments.reduce((sum, s) => sum + s.bytes, 0), startedAt: segments[0].startedAt, updatedAt };
}

/** The segment files read and merged; files dropped by the ring meanwhile, or unreadable, are skipped. */
export function readScreenRecording(summary: RecordingSummary): { readonly header: RecordingHeader; readonly records: RecordingRecord[] } {
  const files = [];
  for (const segment of summary.segments) {
    try {
      files.push(readRecording(fs.readFileSync(segment.path)));
    } catch {
      // gone or cut short before its header
    }
  }
  return mergeRecordings(files);
}

/** Writes the recording as one file (the documented format) to `target`, mode 0600. */
export function exportRecording(summary: RecordingSummary, target: string): number {
  const parts = concatRecordings([readScreenRecording(summary)]);
  const fd = fs.openSync(target, 'w', 0o600);
  let bytes = 0;
  try {
    for (const part of parts) {
      fs.writeSync(fd, part);
      bytes += part.length;
    }
  } finally {
    fs.closeSync(fd);
  }
  return bytes;
}

/** Removes a screen's recording (its segment files and its directory, nothing else). */
export function deleteRecording(root: string, screenId: string): void {
  const dir = screenDir(root, screenId);
  for (const segment of listSegments(dir)) {
    fs.rmSync(segment.path, { force: true });
  }
  try {
    fs.rmdirSync(dir);
  } catch {
    // not empty (a recorder started meanwhile) or already gone
  }
}

/** What a followed recording gained since the last look. */
export interface RecordingGrowth {
  /** Bytes appended to a segment file (a new file: all of it so far), in file order. */
  readonly appended: { readonly name: string; readonly bytes: Uint8Array }[];
  /** Segment files the ring buffer dropped. */
  readonly dropped: string[];
}

/**
 * Follows a screen's recording while it is written, for a replay opened on it: each `poll` reads
 * only what was appended to each segment file since the last one, and the new files. `known`:
 * the files (by name) and how many of their bytes the replay has already.
 */
export class RecordingFollower {
  private readonly offsets: Map<string, number>;

  constructor(
    private readonly dir: string,
    known: readonly { readonly name: string; readonly bytes: number }[],
  ) {
    this.offsets = new Map(known.map((file) => [file.name, file.bytes]));
  }

  poll(): RecordingGrowth {
    const appended: { name: string; bytes: Uint8Array }[] = [];
    const listed = new Set<string>();
    for (const segment of listSegments(this.dir)) {
      const name = path.basename(segment.path);
      listed.add(name);
      const from = this.offsets.get(name) ?? 0;
      if (segment.bytes <= from) {
        continue;
      }
      const bytes = readRange(segment.path, from, segment.bytes - from);
      if (bytes.length > 0) {
        this.offsets.set(name, from + bytes.length);
        appended.push({ name, bytes });
      }
    }
    const dropped = [...this.offsets.keys()].filter((name) => !listed.has(name));
    dropped.forEach((name) => this.offsets.delete(name));
    return { appended, dropped };
  }
}

/** The most often a followed recording's files are read. */
export const FOLLOW_MS = 1_000;

export interface RecordingFollow {
  /** The replay became visible: what came while it was hidden is read now. */
  shown(): void;
  dispose(): void;
}

/**
 * Follows a recording being written for a replay: when a segment file of `dir` changes (the
 * kernel's file events, not a timer: a still screen writes nothing, so nothing runs), what it
 * gained goes to `send`, at most every `intervalMs`, and only while `visible()`; hidden, it is
 * read once `shown` is called. `known` is what the replay has already (RecordingFollower).
 */
export function followRecording(
  dir: string,
  known: readonly { readonly name: string; readonly bytes: number }[],
  send: (growth: RecordingGrowth) => void,
  options: { readonly visible?: () => boolean; readonly intervalMs?: number } = {},
): RecordingFollow {
  const follower = new RecordingFollower(dir, known);
  const intervalMs = options.intervalMs ?? FOLLOW_MS;
  // What was written between the replay's load and the watch is read at once.
  let changed = true;
  let timer: NodeJS.Timeout | undefined;
  let disposed = false;
  const read = () => {
    if (disposed || timer || !changed || options.visible?.() === false) {
      return;
    }
    changed = false;
    const growth = follower.poll();
    if (growth.appended.length > 0 || growth.dropped.length > 0) {
      send(growth);
    }
    timer = setTimeout(() => {
      timer = undefined;
      read();
    }, intervalMs);
  };
  const watch = watchDirectory(dir, (name) => name.endsWith(SEGMENT_SUFFIX), () => {
    changed = true;
    read();
  });
  read();
  return {
    shown: read,
    dispose: () => {
      disposed = true;
      watch.dispose();
      clearTimeout(timer);
    },
  };
}

/** Up to `length` bytes of a file from `offset`; fewer when it is shorter, none when it is gone. */
function readRange(file: string, offset: number, length: number): Uint8Array {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return new Uint8Array(0);
  }
  try {
    const out = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = fs.readSync(fd, out, got, length - got, offset + got);
      if (n === 0) {
        break;
      }
      got += n;
    }
    return out.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}
