/**
 * Noticing that a running screen's sandbox died, without a timer that asks every second: the
 * runtime's own event stream where it has one (Docker, Podman: one long-lived `events` client
 * per screen), else a poll whose interval doubles while the answer stays the same. Either way a
 * relay that ended or an exec that failed asks at once (`checkNow`).
 */
import type { Liveness } from './backends/backend';
import type { Command } from './command';
import type { Logger } from './logger';
import { openStream, type EventCommand, type StreamProcess } from './runner';

export interface LivenessWatchOptions {
  /** Asks whether the sandbox lives (and acts on the answer); resolves with it, undefined when it did not ask. */
  readonly check: () => Promise<Liveness | undefined>;
  /**
   * The runtime's event stream for this sandbox, replaying events from `sinceSeconds` ago so a
   * stream started late misses nothing since the last check. Absent: the backoff poll.
   */
  readonly events?: (sinceSeconds: number) => EventCommand<unknown>;
  /** The poll's first interval; it doubles while the answer stays the same (default 5 s). */
  readonly pollMs?: number;
  /** The poll's longest interval (default 60 s). */
  readonly maxPollMs?: number;
  /** How soon an ended event stream is started again; doubles while it keeps ending (default 1 s). */
  readonly restartMs?: number;
  /** The longest wait before a restart (default 30 s). */
  readonly maxRestartMs?: number;
  readonly log: Logger;
  /** openStream, or a test's stand-in. */
  readonly open?: (cmd: Command) => StreamProcess;
}

const DEFAULT_POLL_MS = 5_000;
const DEFAULT_MAX_POLL_MS = 60_000;
const DEFAULT_RESTART_MS = 1_000;
const DEFAULT_MAX_RESTART_MS = 30_000;
/** A stream that ran this long ended for a new reason: its next restart waits the first delay again. */
const STREAM_HEALTHY_MS = 60_000;
/** Added to the replay window: a check and the stream's start are not the same instant. */
const REPLAY_MARGIN_S = 2;

export class LivenessWatch {
  private readonly pollMs: number;
  private readonly maxPollMs: number;
  private readonly restartMs: number;
  private readonly maxRestartMs: number;
  private readonly open: (cmd: Command) => StreamProcess;
  private timer: NodeJS.Timeout | undefined;
  private stream: StreamProcess | undefined;
  private interval: number;
  private restartDelay: number;
  /** Set by checkNow: the poll's next interval is its first. */
  private reset = false;
  private checking = false;
  private again = false;
  /** The last answer; a watch begins on a screen just found running, so alive. */
  private last: Liveness = 'alive';
  /** When the last check that found the sandbox alive began (the start counts: it just ran). */
  private aliveAt = Date.now();
  private disposed = false;

  constructor(private readonly options: LivenessWatchOptions) {
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.maxPollMs = Math.max(this.pollMs, options.maxPollMs ?? DEFAULT_MAX_POLL_MS);
    this.restartMs = options.restartMs ?? DEFAULT_RESTART_MS;
    this.maxRestartMs = Math.max(this.restartMs, options.maxRestartMs ?? DEFAULT_MAX_RESTART_MS);
    this.open = options.open ?? openStream;
    this.interval = this.pollMs;
    this.restartDelay = this.restartMs;
    if (options.events) {
      this.startStream();
    } else {
      this.schedule();
    }
  }

  /** Something suggests the sandbox may be gone (a relay ended, an exec failed): ask now. */
  checkNow(): void {
    if (this.disposed) {
      return;
    }
    if (!this.options.events) {
      // Asked for a reason: the poll starts again from its first interval.
      clearTimeout(this.timer);
      this.timer = undefined;
      this.reset = true;
    }
    void this.runCheck();
  }

  /** Ends the event stream's process and every timer. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stream?.kill();
    this.stream = undefined;
  }

  private async runCheck(): Promise<void> {
    if (this.checking) {
      this.again = true; // one more check after this one: the reason came after it began
      return;
    }
    this.checking = true;
    try {
      do {
        this.again = false;
        const began = Date.now();
        const found = await this.options.check().catch((err: unknown) => {
          this.options.log.warn(`the liveness check failed: ${err instanceof Error ? err.message : String(err)}`);
          return 'unknown' as const;
        });
        if (found === 'alive') {
          this.aliveAt = began;
        }
        if (found !== undefined) {
          this.interval = found === this.last && !this.reset ? Math.min(this.interval * 2, this.maxPollMs) : this.pollMs;
          this.last = found;
        }
        this.reset = false;
      } while (this.again && !this.disposed);
    } finally {
      this.checking = false;
    }
    if (!this.options.events) {
      this.schedule();
    }
  }

  private schedule(): void {
    if (this.disposed || this.timer) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.runCheck();
    }, this.interval);
    this.timer.unref();
  }

  private startStream(): void {
    if (this.disposed || !this.options.events) {
      return;
    }
    const since = Math.ceil((Date.now() - this.aliveAt) / 1000) + REPLAY_MARGIN_S;
    const command = this.options.events(since);
    const startedAt = Date.now();
    const stream = this.open(command);
    this.stream = stream;
    let rest = '';
    stream.stdout.setEncoding('utf8');
    stream.stdout.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      if (lines.some((line) => command.parseLine(line) !== undefined)) {
        this.checkNow();
      }
    });
    void stream.exited.then(({ exitCode, stderr }) => {
      if (this.disposed || this.stream !== stream) {
        return;
      }
      this.stream = undefined;
      const lived = Date.now() - startedAt;
      this.restartDelay = lived >= STREAM_HEALTHY_MS ? this.restartMs : this.restartDelay;
      this.options.log.warn(
        `the ${command.command} event stream ended (exit ${exitCode}${stderr.trim() ? `: ${stderr.trim()}` : ''}); ` +
          `checking the sandbox now and listening again in ${this.restartDelay} ms`,
      );
      // While nothing listened the sandbox may have died: ask now, and replay the gap on restart.
      this.checkNow();
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.startStream();
      }, this.restartDelay);
      this.timer.unref();
      this.restartDelay = Math.min(this.restartDelay * 2, this.maxRestartMs);
    });
  }
}
