// Where recordings live (one directory of segment files per screen under the extension's
// storage) and what can be done with them there: list, read as one recording, export, delete.
// Free of `vscode`, so the Screens view and the tests list recordings with the same code.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listSegments, type SegmentFile } from './recorder';
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
