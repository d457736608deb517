/**
 * Who watches a screen: one small record per connected viewer (a Screen view, an editor panel,
 * an external VNC viewer's connection), in a directory next to the control lease, so every
 * window of the workspace counts the viewers of all of them.
 *
 * - Directory `<leaseDir>/viewers-<key>/`, mode 0700; one file per viewer,
 *   `<pid>-<hash of the viewer id>.json`, mode 0600, holding {pid, host, kind, since}, written
 *   atomically (tmp file, rename). The viewer id itself never lands on disk (it is a capability
 *   in the lease).
 * - A viewer removes its file when it disconnects. A process that died without doing so leaves
 *   files whose pid is gone: the next count on the same host removes them. Records of another
 *   host (a shared home directory) are counted as they are.
 * - Changes are noticed with fs.watch on the directory, so no window polls.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { viewerHash } from './lease';
import { watchDirectory } from './fileWatch';
import { toDisposable, type DisposableLike } from './lifecycle';

export type ViewerKind = 'view' | 'panel' | 'external';

interface ViewerRecord {
  readonly pid: number;
  readonly host: string;
  readonly kind: ViewerKind;
  readonly since: string;
}

const KINDS: readonly string[] = ['view', 'panel', 'external'];
const RECORD_NAME = /^(\d+)-[0-9a-f]{12}\.json$/;

export class ViewerRegistry {
  readonly dir: string;

  constructor(leaseDir: string, key: string) {
    this.dir = path.join(leaseDir, `viewers-${key}`);
  }

  /** Records one connected viewer until the returned disposable runs. */
  register(viewerId: string, kind: ViewerKind): DisposableLike {
    this.ensureDir();
    const file = path.join(this.dir, `${process.pid}-${viewerHash(viewerId)}.json`);
    const record: ViewerRecord = { pid: process.pid, host: os.hostname(), kind, since: new Date().toISOString() };
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(record) + '\n', { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, file);
    return toDisposable(() => removeQuietly(file));
  }

  /** The viewers connected now, in every process; records of dead processes are removed. */
  count(): number {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return 0; // no viewer ever registered
    }
    let count = 0;
    for (const name of names) {
      if (!RECORD_NAME.test(name)) {
        continue; // a tmp file being renamed, or not ours
      }
      const file = path.join(this.dir, name);
      const record = readRecord(file);
      if (!record) {
        continue;
      }
      if (record.host === os.hostname() && !processAlive(record.pid)) {
        removeQuietly(file);
        continue;
      }
      count++;
    }
    return count;
  }

  /** Calls `listener` after records appear or go (any process's); the caller recounts. */
  watch(listener: () => void): DisposableLike {
    this.ensureDir();
    // Every name counts: a record is written to a temp name and renamed, and the recount reads only records.
    return watchDirectory(this.dir, () => true, listener);
  }

  private ensureDir(): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }
}

function readRecord(file: string): ViewerRecord | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ViewerRecord>;
    if (Number.isInteger(value.pid) && typeof value.host === 'string' && KINDS.includes(String(value.kind))) {
      return value as ViewerRecord;
    }
  } catch {
    // removed meanwhile, or not a record
  }
  return undefined;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'; // there, owned by another user
  }
}

function removeQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // already gone
  }
}
