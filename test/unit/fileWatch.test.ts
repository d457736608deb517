// The lease file's watch (src/core/fileWatch.ts through LeaseStore.watch): another process's
// transition is seen through file events, not a timer, and a watch that fails falls back to a
// slow re-read that ends once watching works again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { watchFile } from '../../src/core/fileWatch';
import { LeaseStore } from '../../src/core/lease';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bot-screen-watch-'));
}

async function until(what: string, done: () => boolean, timeoutMs = 5_000): Promise<number> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await sleep(5);
  }
  return Date.now() - started;
}

test('another store\'s transition (another window) reaches a watching store through file events', async () => {
  const dir = tempDir();
  const here = new LeaseStore(dir, 'w1');
  const other = new LeaseStore(dir, 'w1');
  let seen = here.read();
  let calls = 0;
  const watch = here.watch(() => {
    calls++;
    seen = here.read();
  }, { fallbackMs: 60_000 });
  try {
    other.acquire('viewer-a', 'taken elsewhere');
    const ms = await until('the take-over to be seen', () => seen.holder === 'human');
    assert.equal(seen.viewerId, 'viewer-a');
    other.release('viewer-a');
    await until('the hand-back to be seen', () => seen.holder === 'agent');
    console.log(`# another store's take-over seen after ${ms} ms, ${calls} notifications for two transitions`);
    // Each transition writes a temp file and renames it; only the lease file's own events count,
    // coalesced per turn of the event loop.
    assert.ok(calls >= 2 && calls <= 4, `${calls} notifications for two transitions`);
  } finally {
    watch.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a separate process replacing the file by rename is seen; other files in the directory are not', async () => {
  const dir = tempDir();
  const store = new LeaseStore(dir, 'w2');
  let calls = 0;
  const watch = store.watch(() => calls++, { fallbackMs: 60_000 });
  try {
    fs.writeFileSync(path.join(dir, 'lease-w2.lock'), 'x');
    fs.writeFileSync(path.join(dir, 'lease-other.json'), '{}');
    fs.writeFileSync(path.join(dir, 'lease-w2.json.1.abc.tmp'), '{}');
    await sleep(300);
    assert.equal(calls, 0, 'a lock, another key\'s lease and a temp file are not this lease');
    const record = JSON.stringify({ holder: 'human', viewerId: 'shell', reason: 'r', since: new Date().toISOString(), epoch: 7 });
    execFileSync('sh', ['-c', 'printf %s "$1" > "$2.tmp" && mv "$2.tmp" "$2"', 'sh', record, path.join(dir, 'lease-w2.json')]);
    await until('the renamed file to be seen', () => calls > 0);
    assert.equal(store.read().viewerId, 'shell');
    fs.rmSync(path.join(dir, 'lease-w2.json'));
    const before = calls;
    await until('the removal to be seen', () => calls > before);
    assert.equal(store.read().holder, 'agent', 'a removed file is the agent');
  } finally {
    watch.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a missing directory is made so it can be watched; reading alone still makes nothing', () => {
  const dir = path.join(tempDir(), 'leases');
  const store = new LeaseStore(dir, 'w3');
  store.read();
  assert.equal(fs.existsSync(dir), false);
  const watch = store.watch(() => undefined);
  try {
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
  } finally {
    watch.dispose();
  }
});

test('a watch that fails falls back to a slow re-read, which stops once watching works again', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'lease-w4.json');
  let failing = true;
  let attempts = 0;
  const fallbacks: string[] = [];
  const watch: typeof fs.watch = ((target: string, options: fs.WatchOptions, listener: fs.WatchListener<string>) => {
    attempts++;
    if (failing) {
      throw Object.assign(new Error('ENOSPC: no more inotify watches'), { code: 'ENOSPC' });
    }
    return fs.watch(target, options, listener);
  }) as typeof fs.watch;
  let calls = 0;
  const handle = watchFile(file, () => calls++, { fallbackMs: 50, watch, onFallback: (why) => fallbacks.push(why) });
  try {
    assert.equal(fallbacks.length, 1);
    assert.match(fallbacks[0], /ENOSPC/);
    await until('re-reads while the watch fails', () => calls >= 3);
    assert.ok(attempts >= 3, 'each re-read tries to watch again');
    failing = false;
    const settled = attempts + 1;
    await until('the watch to work again', () => attempts >= settled);
    await sleep(200);
    const quiet = calls;
    const quietAttempts = attempts;
    await sleep(300);
    assert.equal(calls, quiet, 'no re-reads once the watch works: nothing runs while nothing changes');
    assert.equal(attempts, quietAttempts);
    fs.writeFileSync(file, '{}');
    await until('a change seen through the restored watch', () => calls > quiet);
  } finally {
    handle.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a removed directory falls back to re-reading; a directory made again is watched again', async () => {
  const root = tempDir();
  const dir = path.join(root, 'leases');
  fs.mkdirSync(dir);
  const file = path.join(dir, 'lease-w5.json');
  const fallbacks: string[] = [];
  let calls = 0;
  const handle = watchFile(file, () => calls++, { fallbackMs: 50, onFallback: (why) => fallbacks.push(why) });
  try {
    fs.rmSync(dir, { recursive: true });
    await until('the fallback after the directory went', () => fallbacks.length === 1);
    assert.match(fallbacks[0], /went away/);
    await until('re-reads meanwhile', () => calls >= 2);
    fs.mkdirSync(dir);
    await sleep(300); // the next re-read watches the new directory
    const before = calls;
    await sleep(200);
    assert.equal(calls, before, 'the re-reads stopped: the new directory is watched');
    fs.writeFileSync(file, '{}');
    await until('a change in the new directory', () => calls > before);
  } finally {
    handle.dispose();
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('an error on a working watch falls back to re-reading at once', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'lease-w7.json');
  let watcher: fs.FSWatcher | undefined;
  const watch: typeof fs.watch = ((target: string, options: fs.WatchOptions, listener: fs.WatchListener<string>) => {
    watcher = fs.watch(target, options, listener);
    return watcher;
  }) as typeof fs.watch;
  const fallbacks: string[] = [];
  let calls = 0;
  const handle = watchFile(file, () => calls++, { fallbackMs: 60_000, watch, onFallback: (why) => fallbacks.push(why) });
  try {
    const first = watcher!;
    first.emit('error', new Error('EIO'));
    assert.deepEqual(fallbacks, [`watching ${dir} failed: EIO`]);
    await until('a re-read right after the error', () => calls === 1);
  } finally {
    handle.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('after dispose nothing is called and nothing keeps the process alive', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'lease-w6.json');
  let calls = 0;
  const handle = watchFile(file, () => calls++);
  handle.dispose();
  fs.writeFileSync(file, '{}');
  await sleep(200);
  assert.equal(calls, 0);
  fs.rmSync(dir, { recursive: true, force: true });
});
