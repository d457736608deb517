/**
 * Watching one file that other processes replace: the kernel's file events on its directory
 * instead of a timer that re-reads it, with a slow re-read only while the directory cannot be
 * watched. Used for the control lease (lease.ts), which every window's extension host shares,
 * and for the viewer records (viewers.ts), a directory of files that come and go.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toDisposable, type DisposableLike } from './lifecycle';

/** How often the file is re-read (and the watch tried again) while the directory cannot be watched. */
export const FALLBACK_REREAD_MS = 2_000;

export interface FileWatchOptions {
  /** The re-read interval while watching fails (default FALLBACK_REREAD_MS). */
  readonly fallbackMs?: number;
  /** Told once each time watching fails and the slow re-read takes over. */
  readonly onFallback?: (why: string) => void;
  /** fs.watch, or a test's stand-in for a watch that fails. */
  readonly watch?: typeof fs.watch;
}

/**
 * Calls `onChange` (at most once per turn of the event loop) whenever `file` may have changed:
 * written, replaced by a rename (the directory is watched, not the file, whose inode a rename
 * replaces), or removed. Other files in the directory (a writer's temp file, a lock) are not
 * reported. When the directory cannot be watched (it is missing, a watch fails, or the directory
 * itself is removed or renamed), `onChange` is called every `fallbackMs` instead, and each time the
 * watch is tried again; once it works the timer stops. Nothing here keeps the process alive.
 */
export function watchFile(file: string, onChange: () => void, options: FileWatchOptions = {}): DisposableLike {
  const name = path.basename(file);
  return watchDirectory(path.dirname(file), (changed) => changed === name, onChange, options);
}

/**
 * Calls `onChange` (at most once per turn of the event loop) whenever a file of `dir` whose name
 * `accepts` may have changed, with the same slow re-read while the directory cannot be watched.
 */
export function watchDirectory(
  dir: string,
  accepts: (name: string) => boolean,
  onChange: () => void,
  options: FileWatchOptions = {},
): DisposableLike {
  const dirName = path.basename(dir);
  const fallbackMs = options.fallbackMs ?? FALLBACK_REREAD_MS;
  const watch = options.watch ?? fs.watch;
  let watcher: fs.FSWatcher | undefined;
  let fallback: NodeJS.Timeout | undefined;
  let pending = false;
  let disposed = false;

  const notify = () => {
    if (pending || disposed) {
      return;
    }
    pending = true;
    setImmediate(() => {
      pending = false;
      if (!disposed) {
        onChange();
      }
    });
  };

  const fail = (why: string) => {
    watcher?.close();
    watcher = undefined;
    if (disposed || fallback) {
      return;
    }
    options.onFallback?.(why);
    // What changed while nothing watched is read at once, then on the slow timer.
    notify();
    fallback = setInterval(() => {
      notify();
      if (start()) {
        clearInterval(fallback);
        fallback = undefined;
      }
    }, fallbackMs);
    fallback.unref();
  };

  const start = (): boolean => {
    try {
      watcher = watch(dir, { persistent: false }, (_event, changed) => {
        const which = changed === null ? null : String(changed);
        if (which === dirName && !fs.existsSync(dir)) {
          // The directory itself was removed or moved: this watch sees nothing any more.
          fail(`the directory ${dir} went away`);
        } else if (which === null || accepts(which)) {
          notify(); // null: a platform that does not say which file changed
        }
      });
      watcher.on('error', (err) => fail(`watching ${dir} failed: ${err.message}`));
      return true;
    } catch (err) {
      fail(`cannot watch ${dir}: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  };

  start();
  return toDisposable(() => {
    disposed = true;
    watcher?.close();
    watcher = undefined;
    clearInterval(fallback);
    fallback = undefined;
  });
}
