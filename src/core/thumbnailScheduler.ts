/**
 * When thumbnails are grabbed: every few seconds per screen, only while someone looks (the
 * Screens tree is visible), at most one grab in flight per screen, slower after failures
 * (doubling up to a bound, back to the interval after a success), and slower while the picture
 * stays the same (an idle desktop costs a grab a minute, not twenty: each grab is an exec in the
 * sandbox and a JPEG encoding here). Knows nothing of sandboxes: a target is a function that grabs.
 */
import type { DisposableLike } from './lifecycle';

export interface SchedulerClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const SYSTEM_CLOCK: SchedulerClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface SchedulerOptions<T> {
  /** Between the end of one grab of a screen and the start of its next (default 3 s). */
  readonly intervalMs?: number;
  /** The longest wait after repeated failures (default 60 s). */
  readonly maxBackoffMs?: number;
  /**
   * Whether two grabs show the same picture. Given, a grab that shows the last one's picture is
   * not reported, and the wait before the next doubles (up to `maxUnchangedMs`); a new picture
   * brings the interval back.
   */
  readonly same?: (a: T, b: T) => boolean;
  /** The longest wait while the picture stays the same (default 60 s). */
  readonly maxUnchangedMs?: number;
  readonly clock?: SchedulerClock;
}

export type GrabOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown; readonly failures: number };

interface Slot<T> {
  readonly grab: () => Promise<T>;
  running: boolean;
  timer: unknown;
  /** When the next grab is due (0: at once). */
  dueAt: number;
  failures: number;
  /** The last picture reported, while grabs keep succeeding. */
  last: { readonly value: T } | undefined;
  /** Grabs in a row that showed the last picture. */
  unchanged: number;
}

export class ThumbnailScheduler<T> implements DisposableLike {
  private readonly slots = new Map<string, Slot<T>>();
  private readonly listeners = new Set<(key: string, outcome: GrabOutcome<T>) => void>();
  private visible = false;
  private disposed = false;
  private readonly intervalMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxUnchangedMs: number;
  private readonly same: ((a: T, b: T) => boolean) | undefined;
  private readonly clock: SchedulerClock;

  constructor(options: SchedulerOptions<T> = {}) {
    this.intervalMs = options.intervalMs ?? 3000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.maxUnchangedMs = options.maxUnchangedMs ?? 60_000;
    this.same = options.same;
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** Grabs run only while visible; hiding cancels every pending grab (one already running ends by itself). */
  setVisible(visible: boolean): void {
    if (this.visible === visible || this.disposed) {
      return;
    }
    this.visible = visible;
    for (const slot of this.slots.values()) {
      if (visible) {
        this.schedule(slot);
      } else {
        this.cancel(slot);
      }
    }
  }

  /**
   * The screens to grab, by key. A new key is grabbed at once (while visible); a key kept keeps
   * its timing and its grab function; a key left out is dropped, and the answer of its running
   * grab is not reported.
   */
  setTargets(targets: ReadonlyMap<string, () => Promise<T>>): void {
    for (const [key, slot] of this.slots) {
      if (!targets.has(key)) {
        this.cancel(slot);
        this.slots.delete(key);
      }
    }
    for (const [key, grab] of targets) {
      if (!this.slots.has(key)) {
        const slot: Slot<T> = { grab, running: false, timer: undefined, dueAt: 0, failures: 0, last: undefined, unchanged: 0 };
        this.slots.set(key, slot);
        this.schedule(slot);
      }
    }
  }

  /** Whether a grab of `key` runs now. */
  inFlight(key: string): boolean {
    return this.slots.get(key)?.running ?? false;
  }

  onResult(listener: (key: string, outcome: GrabOutcome<T>) => void): DisposableLike {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  dispose(): void {
    this.disposed = true;
    this.visible = false;
    for (const slot of this.slots.values()) {
      this.cancel(slot);
    }
    this.slots.clear();
    this.listeners.clear();
  }

  private schedule(slot: Slot<T>): void {
    if (!this.visible || slot.running || slot.timer !== undefined) {
      return;
    }
    const delay = Math.max(0, slot.dueAt - this.clock.now());
    slot.timer = this.clock.setTimeout(() => {
      slot.timer = undefined;
      this.fire(slot);
    }, delay);
  }

  private cancel(slot: Slot<T>): void {
    if (slot.timer !== undefined) {
      this.clock.clearTimeout(slot.timer);
      slot.timer = undefined;
    }
  }

  private fire(slot: Slot<T>): void {
    if (!this.visible || slot.running || this.disposed) {
      return;
    }
    slot.running = true;
    const report = (outcome: GrabOutcome<T>) => {
      slot.running = false;
      const key = [...this.slots].find(([, s]) => s === slot)?.[0];
      if (key === undefined) {
        return; // dropped meanwhile
      }
      const seen = outcome.ok && slot.last !== undefined && this.same !== undefined && this.same(slot.last.value, outcome.value);
      slot.unchanged = seen ? slot.unchanged + 1 : 0;
      slot.last = outcome.ok ? (seen ? slot.last : { value: outcome.value }) : undefined;
      const wait = !outcome.ok
        ? Math.min(this.maxBackoffMs, this.intervalMs * 2 ** outcome.failures)
        : Math.max(this.intervalMs, Math.min(this.maxUnchangedMs, this.intervalMs * 2 ** slot.unchanged));
      slot.dueAt = this.clock.now() + wait;
      if (!seen) {
        for (const listener of [...this.listeners]) {
          listener(key, outcome);
        }
      }
      this.schedule(slot);
    };
    let grabbing: Promise<T>;
    try {
      grabbing = slot.grab();
    } catch (error) {
      grabbing = Promise.reject(error);
    }
    grabbing.then(
      (value) => {
        slot.failures = 0;
        report({ ok: true, value });
      },
      (error: unknown) => {
        slot.failures++;
        report({ ok: false, error, failures: slot.failures });
      },
    );
  }
}
