// The bridge's pump: a relay's stdout coalesced into webview posts, with backpressure by unanswered posts.
import type { Readable } from 'node:stream';

export interface PumpOptions {
  /** Pause the source when this many posts are unanswered... */
  readonly maxInFlight: number;
  /** ...and resume when they fall to this many. */
  readonly resumeInFlight: number;
  /** Largest single post; bigger backlogs go out as several. */
  readonly maxPostBytes: number;
}

export const DEFAULT_PUMP_OPTIONS: PumpOptions = { maxInFlight: 16, resumeInFlight: 4, maxPostBytes: 1 << 20 };

export interface PumpStats {
  /** How often the relay stopped being read (the webview lagged or was hidden). */
  pauses: number;
}

/**
 * Moves a relay's stdout into a webview. Small chunks read in one turn of the event loop are
 * coalesced into one exact-size Uint8Array (a pooled Node Buffer would transfer its whole
 * backing store). When the webview lags (too many unanswered posts) or is hidden, the relay is
 * no longer read, so backpressure reaches the VNC server instead of piling up in memory.
 */
export class RfbPump {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private inFlight = 0;
  private visible = true;
  private flushScheduled = false;
  private disposed = false;
  readonly stats: PumpStats = { pauses: 0 };

  constructor(
    private readonly source: Readable,
    private readonly post: (data: Uint8Array) => PromiseLike<boolean>,
    private readonly options: PumpOptions = DEFAULT_PUMP_OPTIONS,
  ) {
    source.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    this.update();
  }

  dispose(): void {
    this.disposed = true;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private onData(chunk: Buffer): void {
    if (this.disposed) {
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.update();
  }

  private update(): void {
    const blocked = !this.visible || this.inFlight >= this.options.maxInFlight;
    if (blocked && !this.source.isPaused()) {
      this.source.pause();
      this.stats.pauses++;
    } else if (!blocked && this.source.isPaused() && this.inFlight <= this.options.resumeInFlight) {
      this.source.resume();
    }
    if (this.visible && this.pendingBytes > 0 && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    while (!this.disposed && this.visible && this.pendingBytes > 0 && this.inFlight < this.options.maxInFlight) {
      const data = this.take(Math.min(this.pendingBytes, this.options.maxPostBytes));
      this.inFlight++;
      Promise.resolve(this.post(data)).then(
        () => this.settle(),
        () => this.settle(),
      );
    }
    this.update();
  }

  private settle(): void {
    this.inFlight--;
    if (!this.disposed) {
      this.update();
    }
  }

  /** Copies the first `size` pending bytes into a fresh exact-size array. */
  private take(size: number): Uint8Array {
    const out = new Uint8Array(size);
    let offset = 0;
    while (offset < size) {
      const head = this.pending[0];
      const n = Math.min(head.length, size - offset);
      out.set(head.subarray(0, n), offset);
      offset += n;
      if (n === head.length) {
        this.pending.shift();
      } else {
        this.pending[0] = head.subarray(n);
      }
    }
    this.pendingBytes -= size;
    return out;
  }
}
