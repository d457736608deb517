/**
 * Every screen this machine runs for this user, as the Screens overview lists it: the markers of
 * all windows (one per workspace, in the extension's global storage), each with who holds its
 * control lease and how many viewers watch it, and the name of the workspace whose window owns it;
 * and the recordings of screens that no longer run.
 * File reads only: no CLI runs, and nothing is written but this window's own workspace record.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LeaseStore, type LeaseHolder } from './lease';
import type { Marker, MarkerStore } from './marker';
import { isScreenId, recordingOf, type RecordingSummary } from './recorderStore';
import { ViewerRegistry } from './viewers';

/** What a window records about its workspace, so other windows can name its screen (and focus it). */
export interface WorkspaceRecord {
  /** The workspace's name as VS Code shows it. */
  readonly name: string;
  /** The workspace folder or .code-workspace file, as a URI string. */
  readonly uri: string;
}

export interface ListedScreen {
  readonly key: string;
  readonly marker: Marker;
  readonly holder: LeaseHolder;
  /** The viewers connected to it, in every window. */
  readonly viewers: number;
  readonly workspace?: WorkspaceRecord;
}

const KEY_FILE = /^([0-9a-f]{12})\.json$/;
const MAX_NAME = 200;
const MAX_URI = 4096;

/** One small file per workspace key, `<dir>/<key>.json` (0600, written atomically). */
export class WorkspaceRecords {
  constructor(readonly dir: string) {}

  write(key: string, record: WorkspaceRecord): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, `${key}.json`);
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    fs.chmodSync(temporary, 0o600); // `mode` applies only when the file is created: a left-over one keeps its own
    fs.renameSync(temporary, file);
  }

  /** The record, or undefined when there is none or it is not one (never throws). */
  read(key: string): WorkspaceRecord | undefined {
    try {
      const value = JSON.parse(fs.readFileSync(path.join(this.dir, `${key}.json`), 'utf8')) as Partial<WorkspaceRecord>;
      const { name, uri } = value;
      if (typeof name === 'string' && typeof uri === 'string' && name.length <= MAX_NAME && uri.length <= MAX_URI && /^[a-z][a-z0-9+.-]*:/i.test(uri)) {
        return { name, uri };
      }
    } catch {
      // missing or garbled: the screen is named by its key
    }
    return undefined;
  }
}

export interface ScreenListSources {
  readonly markers: MarkerStore;
  /** The directory MarkerStore writes to. */
  /** The directory of the control leases (and the viewer records next to them). */
  readonly leasesDir: string;
  readonly workspaces: WorkspaceRecords;
}

/**
 * The screens every window recorded, sorted by when they started. A marker that is not usable
 * (MarkerStore's checks) is left out, as is everything in the directory that is not a marker.
 */
export function listScreens(sources: ScreenListSources): ListedScreen[] {
  let names: string[];
  try {
    names = fs.readdirSync(sources.markers.dir);
  } catch {
    return []; // no screen ever started
  }
  const screens: ListedScreen[] = [];
  for (const name of names) {
    const key = KEY_FILE.exec(name)?.[1];
    const marker = key === undefined ? undefined : sources.markers.read(key).marker;
    if (key === undefined || !marker) {
      continue;
    }
    screens.push({
      key,
      marker,
      // Read-only: a lease is read without its lock, as every reader does.
      holder: new LeaseStore(sources.leasesDir, key).read().holder,
      viewers: new ViewerRegistry(sources.leasesDir, key).count(),
      workspace: sources.workspaces.read(key),
    });
  }
  return screens.sort((a, b) => a.marker.startedAt.localeCompare(b.marker.startedAt) || a.key.localeCompare(b.key));
}

/**
 * Whether a screen with this workspace key runs in some window (its marker is there): its
 * recording may be being written. A marker file that cannot be read counts as running (fail closed).
 */
export function screenRuns(markers: MarkerStore, key: string): boolean {
  const read = markers.read(key);
  return read.marker !== undefined || read.problem !== undefined;
}

/**
 * The recordings of screens the Screens view does not list (stopped, or closed with their
 * window), for its "Recordings" group. Cheap enough for every refresh of a visible tree: the
 * recordings directory is read once, and a screen's segment files are listed again only when its
 * directory (a segment added or dropped) or its newest segment (appended to) changed; the screens
 * the view lists are skipped without a look at their files.
 */
export class StoppedRecordings {
  private readonly cache = new Map<string, { readonly dirMtimeMs: number; readonly newest: string; readonly newestStamp: string; readonly summary: RecordingSummary }>();

  constructor(readonly root: string) {}

  /** Newest first; `listed`: the workspace keys of the screens the view shows (left out). */
  list(listed: ReadonlySet<string>): RecordingSummary[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.root);
    } catch {
      this.cache.clear();
      return []; // nothing recorded yet
    }
    const found: RecordingSummary[] = [];
    const seen = new Set<string>();
    for (const screenId of names) {
      if (!isScreenId(screenId) || listed.has(screenId)) {
        continue;
      }
      seen.add(screenId);
      const summary = this.summaryOf(screenId);
      if (summary) {
        found.push(summary);
      }
    }
    for (const screenId of [...this.cache.keys()]) {
      if (!seen.has(screenId)) {
        this.cache.delete(screenId);
      }
    }
    return found.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  private summaryOf(screenId: string): RecordingSummary | undefined {
    const dirMtimeMs = mtimeOf(path.join(this.root, screenId));
    const kept = this.cache.get(screenId);
    if (kept && kept.dirMtimeMs === dirMtimeMs && stampOf(kept.newest) === kept.newestStamp) {
      return kept.summary;
    }
    this.cache.delete(screenId);
    const summary = dirMtimeMs === undefined ? undefined : recordingOf(this.root, screenId);
    if (summary && dirMtimeMs !== undefined) {
      const newest = summary.segments[summary.segments.length - 1].path;
      this.cache.set(screenId, { dirMtimeMs, newest, newestStamp: stampOf(newest), summary });
    }
    return summary;
  }
}

function mtimeOf(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** A file's size and mtime in one string ('' when it is gone): what changes when it is appended to. */
function stampOf(file: string): string {
  try {
    const stat = fs.statSync(file);
    return `${stat.size}/${stat.mtimeMs}`;
  } catch {
    return '';
  }
}
