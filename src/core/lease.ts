/**
 * The control lease: who may act on the screen, the agent or one human viewer, recorded on disk
 * so every process (extension hosts of several windows, tools) agrees.
 *
 * - File `<dir>/lease-<key>.json`, mode 0600 in a 0700 directory, replaced atomically (a unique
 *   tmp file, fsync, rename). Readers never take the lock: a rename is all-or-nothing.
 * - Read-modify-write transitions run under an exclusive lock file `<dir>/lease-<key>.lock`
 *   created with O_EXCL and holding {pid, host, nonce, at}. A lock whose process is gone (same
 *   host) or that is older than `staleLockMs` is broken; waiting is bounded (`lockTimeoutMs`),
 *   then `LeaseLockError`.
 * - A missing file means the agent holds. An unreadable file, bad JSON or an unknown holder fails
 *   closed: a human holds, viewer `unreadable-lease` (no real viewer can match it), with
 *   `unreadable` saying why.
 * - Every transition bumps the epoch by exactly one; no-ops (re-acquire by the holder, release by
 *   a non-holder, release while the agent holds) do not. The epoch never goes back within a
 *   process: a fail-closed lease reads as one past the highest epoch seen (it is a change), and a
 *   transition from it or from a missing file continues after that.
 * - The epoch is bounded (`MAX_EPOCH`, below 2^53 so `+ 1` stays exact): a file claiming more,
 *   or a negative or non-integer epoch, is corrupt (fail closed). The transition that repairs a
 *   corrupt file, and one that would pass `MAX_EPOCH`, starts a new `generation` (a random id
 *   written to the file), so a lease from before can never compare equal to one after, even where
 *   the number repeats: (generation, epoch) is the identity of a lease. A file without a
 *   generation is the first one.
 *
 * The methods are synchronous (small files, a lock held for one read and one write).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { watchFile, type FileWatchOptions } from './fileWatch';
import { toDisposable, type DisposableLike } from './lifecycle';

export type LeaseHolder = 'agent' | 'human';

export interface Lease {
  readonly holder: LeaseHolder;
  /** The human viewer holding control; absent when the agent holds. A capability: never show it. */
  readonly viewerId?: string;
  readonly reason: string;
  /** ISO 8601 time of the transition that produced this lease. */
  readonly since: string;
  readonly epoch: number;
  /** Which run of epochs this one counts in; absent for the first. See the file comment. */
  readonly generation?: string;
  /** Only on a fail-closed lease: why the file could not be used. Never written to disk. */
  readonly unreadable?: string;
}

/** What may be shown or broadcast: the viewer id replaced by a short hash. */
export interface PublicLease {
  readonly holder: LeaseHolder;
  readonly viewerHash?: string;
  readonly reason: string;
  readonly since: string;
  readonly epoch: number;
  readonly unreadable?: string;
}

export interface LeaseStoreOptions {
  /** Give up waiting for the lock after this long (default 5000 ms). */
  readonly lockTimeoutMs?: number;
  /** A lock older than this is broken even if its process seems alive (default 10000 ms). */
  readonly staleLockMs?: number;
}

export interface ReleaseOptions {
  /** Hand back even if `viewerId` is not the holder (or none is given, or the file is unreadable). */
  readonly force?: boolean;
  readonly reason?: string;
}

export type LeaseListener = (lease: Lease, previous: Lease) => void;

/** The viewer id of a fail-closed lease; `acquire` refuses it as a viewer id. */
export const UNREADABLE_VIEWER = 'unreadable-lease';

const MAX_REASON = 500;
const MAX_VIEWER_ID = 256;
const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const GENERATION_PATTERN = /^[0-9a-f]{16}$/;
/** The largest epoch a lease file may hold; one more is still an exact number. */
export const MAX_EPOCH = Number.MAX_SAFE_INTEGER - 1;

/** Thrown to the agent while a person has control. `message` is written for the agent. */
export class HumanHasControlError extends Error {
  readonly code = 'human_has_control';

  constructor(readonly lease: Lease) {
    super(
      'A person has taken control of the screen. Screen actions are refused (not queued) until ' +
        'they hand control back. Do not retry; ask them to hand control back or tell them what ' +
        'you need done on the screen.',
    );
    this.name = 'HumanHasControlError';
  }
}

/** The lock could not be taken in time (another process holds it). */
export class LeaseLockError extends Error {
  readonly code = 'lease_locked';

  constructor(readonly lockPath: string, readonly waitedMs: number) {
    super(`could not lock ${lockPath} within ${waitedMs} ms: another process holds it`);
    this.name = 'LeaseLockError';
  }
}

export function publicView(lease: Lease): PublicLease {
  const view: { -readonly [K in keyof PublicLease]: PublicLease[K] } = {
    holder: lease.holder,
    reason: lease.reason,
    since: lease.since,
    epoch: lease.epoch,
  };
  if (lease.viewerId !== undefined) {
    view.viewerHash = viewerHash(lease.viewerId);
  }
  if (lease.unreadable !== undefined) {
    view.unreadable = lease.unreadable;
  }
  return view;
}

/** Whether `lease` gives the screen's input to this viewer (a lease we cannot read gives it to nobody). */
export function viewerHolds(lease: Lease, viewerId: string): boolean {
  return lease.holder === 'human' && lease.unreadable === undefined && lease.viewerId === viewerId;
}

/** First 12 hex characters of sha256(viewerId). */
export function viewerHash(viewerId: string): string {
  return createHash('sha256').update(viewerId, 'utf8').digest('hex').slice(0, 12);
}

export class LeaseStore {
  readonly path: string;
  readonly lockPath: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  /** The highest epoch seen in `generation`. */
  private highWater = 0;
  private generation: string | undefined;
  private readonly listeners = new Set<LeaseListener>();

  constructor(
    readonly dir: string,
    readonly key: string,
    options: LeaseStoreOptions = {},
  ) {
    if (!KEY_PATTERN.test(key)) {
      throw new TypeError(`lease key must match ${KEY_PATTERN}, got ${JSON.stringify(key)}`);
    }
    this.path = path.join(dir, `lease-${key}.json`);
    this.lockPath = path.join(dir, `lease-${key}.lock`);
    this.lockTimeoutMs = options.lockTimeoutMs ?? 5000;
    this.staleLockMs = options.staleLockMs ?? 10_000;
  }

  /** The current lease. Never throws: a missing file is the agent, a bad one a human. */
  read(): Lease {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch (err) {
      if (errorCode(err) === 'ENOENT') {
        return this.withGeneration({ holder: 'agent', reason: '', since: new Date(0).toISOString(), epoch: this.highWater });
      }
      return this.failClosed(`cannot read the lease file (${errorCode(err) ?? String(err)})`);
    }
    const parsed = parseLease(text);
    if (typeof parsed === 'string') {
      return this.failClosed(parsed);
    }
    if (parsed.generation !== this.generation) {
      // Another process started a new generation: its epochs are the ones to continue.
      this.generation = parsed.generation;
      this.highWater = parsed.epoch;
    } else {
      this.highWater = Math.max(this.highWater, parsed.epoch);
    }
    return parsed;
  }

  /** A human viewer takes control. Last writer wins; the holder taking it again is a no-op. */
  acquire(viewerId: string, reason: string): Lease {
    checkViewerId(viewerId);
    const why = checkReason(reason);
    return this.transition((current) => {
      if (current.holder === 'human' && current.unreadable === undefined && current.viewerId === viewerId) {
        return undefined;
      }
      return { holder: 'human', viewerId, reason: why };
    });
  }

  /**
   * Hand control back to the agent. Ignored when the agent already holds, and when `viewerId` is
   * not the holder (a bare release included) unless `force`.
   */
  release(viewerId?: string, options: ReleaseOptions = {}): Lease {
    const why = checkReason(options.reason ?? '');
    return this.transition((current) => {
      if (current.holder === 'agent') {
        return undefined;
      }
      const isHolder = current.unreadable === undefined && viewerId !== undefined && current.viewerId === viewerId;
      if (!isHolder && options.force !== true) {
        return undefined;
      }
      return { holder: 'agent', reason: why };
    });
  }

  /** For agent actions: the lease (keep its epoch) or `HumanHasControlError`. */
  assertAgentMayAct(): Lease {
    const lease = this.read();
    if (lease.holder !== 'agent') {
      throw new HumanHasControlError(lease);
    }
    return lease;
  }

  /**
   * After an agent action: throws `HumanHasControlError` if control changed hands since `start`
   * (any epoch change counts), so the action's result is discarded.
   */
  assertAgentStillActs(start: Lease): Lease {
    const lease = this.read();
    if (lease.holder !== 'agent' || lease.epoch !== start.epoch || lease.generation !== start.generation) {
      throw new HumanHasControlError(lease);
    }
    return lease;
  }

  /** True only while this very viewer holds control. */
  viewerMayInput(viewerId: string): boolean {
    return viewerHolds(this.read(), viewerId);
  }

  publicView(lease: Lease = this.read()): PublicLease {
    return publicView(lease);
  }

  /** Called after every transition made through this store (not other processes'). */
  onTransition(listener: LeaseListener): DisposableLike {
    this.listeners.add(listener);
    return toDisposable(() => this.listeners.delete(listener));
  }

  /**
   * Calls `listener` when the lease file may have changed, by any process (another window's
   * transition included): file events on its directory, not a timer (fileWatch.ts). The
   * directory is made (0700) if it is missing, so it can be watched from the start.
   */
  watch(listener: () => void, options?: FileWatchOptions): DisposableLike {
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    } catch {
      // watchFile falls back to re-reading until the directory can be watched
    }
    return watchFile(this.path, listener, options);
  }

  private transition(change: (current: Lease) => Omit<Lease, 'epoch' | 'since'> | undefined): Lease {
    const outcome = this.withLock(() => {
      const current = this.read();
      const next = change(current);
      if (next === undefined) {
        return { lease: current, previous: undefined };
      }
      let epoch = Math.max(current.epoch, this.highWater) + 1;
      let generation = this.generation;
      if (current.unreadable !== undefined || epoch > MAX_EPOCH) {
        generation = randomBytes(8).toString('hex');
        epoch = epoch > MAX_EPOCH ? 1 : epoch;
      }
      const lease: Lease = { ...next, since: new Date().toISOString(), epoch, ...(generation === undefined ? {} : { generation }) };
      this.write(lease);
      this.generation = generation;
      this.highWater = lease.epoch;
      return { lease, previous: current };
    });
    if (outcome.previous !== undefined) {
      for (const listener of [...this.listeners]) {
        try {
          listener(outcome.lease, outcome.previous);
        } catch {
          // a listener that throws does not stop the handoff
        }
      }
    }
    return outcome.lease;
  }

  private failClosed(why: string): Lease {
    let since: string;
    try {
      since = fs.statSync(this.path).mtime.toISOString();
    } catch {
      since = new Date().toISOString();
    }
    return this.withGeneration({ holder: 'human', viewerId: UNREADABLE_VIEWER, reason: UNREADABLE_VIEWER, since, epoch: this.highWater + 1, unreadable: why });
  }

  private withGeneration(lease: Lease): Lease {
    return this.generation === undefined ? lease : { ...lease, generation: this.generation };
  }

  private write(lease: Lease): void {
    const record: Record<string, unknown> = { holder: lease.holder };
    if (lease.viewerId !== undefined) {
      record.viewerId = lease.viewerId;
    }
    record.reason = lease.reason;
    record.since = lease.since;
    record.epoch = lease.epoch;
    if (lease.generation !== undefined) {
      record.generation = lease.generation;
    }
    const tmp = `${this.path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const fd = fs.openSync(tmp, 'wx', 0o600);
    try {
      try {
        fs.writeSync(fd, JSON.stringify(record) + '\n');
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      renameWithRetry(tmp, this.path);
    } catch (err) {
      unlinkQuietly(tmp);
      throw err;
    }
  }

  private withLock<T>(body: () => T): T {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const nonce = this.lock();
    try {
      return body();
    } finally {
      this.unlock(nonce);
    }
  }

  private lock(): string {
    const nonce = randomBytes(8).toString('hex');
    const content = JSON.stringify({ pid: process.pid, host: os.hostname(), nonce, at: Date.now() });
    const started = Date.now();
    let pause = 1;
    for (;;) {
      let fd: number | undefined;
      try {
        fd = fs.openSync(this.lockPath, 'wx', 0o600);
      } catch (err) {
        if (errorCode(err) !== 'EEXIST') {
          throw err;
        }
      }
      if (fd !== undefined) {
        try {
          fs.writeSync(fd, content);
        } finally {
          fs.closeSync(fd);
        }
        return nonce;
      }
      if (this.breakStaleLock()) {
        continue;
      }
      const waited = Date.now() - started;
      if (waited >= this.lockTimeoutMs) {
        throw new LeaseLockError(this.lockPath, waited);
      }
      sleepSync(Math.min(pause + Math.random() * pause, this.lockTimeoutMs - waited));
      pause = Math.min(pause * 2, 8);
    }
  }

  private unlock(nonce: string): void {
    try {
      const held = JSON.parse(fs.readFileSync(this.lockPath, 'utf8')) as { nonce?: unknown };
      if (held.nonce === nonce) {
        fs.unlinkSync(this.lockPath);
      }
    } catch {
      // gone, or broken as stale by another process: nothing of ours to remove
    }
  }

  /** Removes the lock if its owner is dead or it is too old. True if a lock was removed. */
  private breakStaleLock(): boolean {
    let stat: fs.Stats;
    let text = '';
    try {
      stat = fs.statSync(this.lockPath);
      text = fs.readFileSync(this.lockPath, 'utf8');
    } catch (err) {
      return errorCode(err) === 'ENOENT'; // released meanwhile: retry at once
    }
    let owner: { pid?: unknown; host?: unknown; nonce?: unknown } | undefined;
    try {
      owner = JSON.parse(text) as typeof owner;
    } catch {
      owner = undefined; // being written right now, or its writer died: only age can tell
    }
    const dead =
      owner !== undefined &&
      owner.host === os.hostname() &&
      typeof owner.pid === 'number' &&
      owner.pid !== process.pid &&
      !processAlive(owner.pid);
    if (!dead && Date.now() - stat.mtimeMs <= this.staleLockMs) {
      return false;
    }
    // Move it aside first, then make sure what we moved is the lock we judged (not a fresh one
    // taken meanwhile by a process that broke it before us); if not, put that one back.
    const aside = `${this.lockPath}.${process.pid}.${randomBytes(6).toString('hex')}.stale`;
    try {
      fs.renameSync(this.lockPath, aside);
    } catch {
      return false;
    }
    try {
      const movedText = fs.readFileSync(aside, 'utf8');
      if (movedText !== text) {
        try {
          fs.linkSync(aside, this.lockPath);
        } catch {
          // a newer lock exists already; the one we moved is lost to its owner's unlock
        }
        return false;
      }
      return true;
    } catch {
      return false;
    } finally {
      unlinkQuietly(aside);
    }
  }
}

/** The record on disk, or why it cannot be used. */
function parseLease(text: string): Lease | string {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return 'the lease file is not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'the lease file is not a JSON object';
  }
  const record = value as Record<string, unknown>;
  const { holder, viewerId, reason, since, epoch, generation } = record;
  if (holder !== 'agent' && holder !== 'human') {
    return `unknown lease holder ${JSON.stringify(holder) ?? 'undefined'}`;
  }
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 0 || epoch > MAX_EPOCH) {
    return `the lease epoch is not an integer from 0 to ${MAX_EPOCH}`;
  }
  if (generation !== undefined && (typeof generation !== 'string' || !GENERATION_PATTERN.test(generation))) {
    return 'the lease generation is malformed';
  }
  const counted = generation === undefined ? {} : { generation };
  if (typeof reason !== 'string' || typeof since !== 'string' || Number.isNaN(Date.parse(since))) {
    return 'the lease reason or since is malformed';
  }
  if (holder === 'human') {
    if (typeof viewerId !== 'string' || viewerId.length === 0 || viewerId === UNREADABLE_VIEWER) {
      return 'a human lease without a valid viewer id';
    }
    return { holder, viewerId, reason, since, epoch, ...counted };
  }
  return { holder, reason, since, epoch, ...counted };
}

function checkViewerId(viewerId: unknown): asserts viewerId is string {
  if (typeof viewerId !== 'string' || viewerId.length === 0 || viewerId.length > MAX_VIEWER_ID) {
    throw new TypeError(`a viewer id must be a non-empty string of at most ${MAX_VIEWER_ID} characters`);
  }
  if (viewerId === UNREADABLE_VIEWER) {
    throw new TypeError(`"${UNREADABLE_VIEWER}" is reserved and cannot be a viewer id`);
  }
}

function checkReason(reason: unknown): string {
  if (typeof reason !== 'string') {
    throw new TypeError('a lease reason must be a string');
  }
  return reason.length > MAX_REASON ? reason.slice(0, MAX_REASON) : reason;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === 'EPERM'; // exists, owned by someone else
  }
}

function renameWithRetry(from: string, to: string): void {
  // Windows refuses to replace a file another process has open for a moment; POSIX never does.
  for (let attempt = 0; ; attempt++) {
    try {
      fs.renameSync(from, to);
      return;
    } catch (err) {
      const code = errorCode(err);
      if (attempt >= 20 || (code !== 'EPERM' && code !== 'EACCES' && code !== 'EBUSY')) {
        throw err;
      }
      sleepSync(5);
    }
  }
}

function unlinkQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // already gone
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  if (ms > 0) {
    Atomics.wait(sleeper, 0, 0, ms);
  }
}

function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}
