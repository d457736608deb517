/**
 * When thumbnails are grabbed: every few seconds per screen, only while someone looks (the
 * Screens tree is visible), at most one grab in flight per screen, and slower after failures
 * (doubling up to a bound, back to the interval after a success). Knows nothing of sandboxes: a
 * target is a function that grabs.
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

export interface SchedulerOptions {
  /** Between the end of one grab of a screen and the start of its next (default 3 s). */
  readonly intervalMs?: number;
  /** The longest wait after repeated failures (default 60 s). */
  readonly maxBackoffMs?: number;
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
}

export class ThumbnailScheduler<T> implements DisposableLike {
  private readonly slots = new Map<string, Slot<T>>();
  private readonly listeners = new Set<(key: string, outcome: GrabOutcome<T>) => void>();
  private visible = false;
  private disposed = false;
  private readonly intervalMs: number;
  private readonly maxBackoffMs: number;
  private readonly clock: SchedulerClock;

  constructor(options: SchedulerOptions = {}) {
    this.intervalMs = options.intervalMs ?? 3000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
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
        const slot: Slot<T> = { grab, running: false, timer: undefined, dueAt: 0, failures: 0 };
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
      const wait = outcome.ok ? this.intervalMs : Math.min(this.maxBackoffMs, this.intervalMs * 2 ** outcome.failures);
      slot.dueAt = this.clock.now() + wait;
      for (const listener of [...this.listeners]) {
        listener(key, outcome);
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
