// The bridge's pumps: a relay's stdout into a viewer, either as webview posts (backpressure by
// unanswered posts) or as messages on the direct channel (backpressure by the socket's buffer).
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
  /** How often the relay stopped being read (the viewer lagged or was hidden). */
  pauses: number;
}

/**
 * What both pumps share: chunks read in one turn of the event loop are coalesced and handed on
 * together; while the viewer is hidden or its sink is full, the relay is no longer read, so
 * backpressure reaches the VNC server instead of piling up in memory.
 */
abstract class SourcePump {
  protected pending: Buffer[] = [];
  protected pendingBytes = 0;
  protected visible = true;
  protected disposed = false;
  private flushScheduled = false;
  readonly stats: PumpStats = { pauses: 0 };

  constructor(private readonly source: Readable) {
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

  /** True while the sink takes nothing more. */
  protected abstract blocked(): boolean;
  /** True when a paused source may be read again. */
  protected abstract mayResume(): boolean;
  /** Hands pending bytes to the sink, as far as it takes them. */
  protected abstract drain(): void;

  /** True while pending bytes wait for the sink (the source is still read). */
  protected waiting(): boolean {
    return false;
  }

  private onData(chunk: Buffer): void {
    if (this.disposed) {
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.update();
  }

  protected update(): void {
    if (this.disposed) {
      return;
    }
    const blocked = !this.visible || this.blocked();
    if (blocked && !this.source.isPaused()) {
      this.source.pause();
      this.stats.pauses++;
    } else if (!blocked && this.source.isPaused() && this.mayResume()) {
      this.source.resume();
    }
    if (!blocked && this.pendingBytes > 0 && !this.flushScheduled && !this.waiting()) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (!this.disposed && this.visible) {
      this.drain();
    }
    this.update();
  }
}

/**
 * Moves a relay's stdout into a webview by posts. Each post is one exact-size Uint8Array (a
 * pooled Node Buffer would transfer its whole backing store). When the webview lags (too many
 * unanswered posts) or is hidden, the relay is not read.
 */
export class RfbPump extends SourcePump {
  private inFlight = 0;

  constructor(
    source: Readable,
    private readonly post: (data: Uint8Array) => PromiseLike<boolean>,
    private readonly options: PumpOptions = DEFAULT_PUMP_OPTIONS,
  ) {
    super(source);
  }

  protected blocked(): boolean {
    return this.inFlight >= this.options.maxInFlight;
  }

  protected mayResume(): boolean {
    return this.inFlight <= this.options.resumeInFlight;
  }

  protected drain(): void {
    while (!this.disposed && this.pendingBytes > 0 && this.inFlight < this.options.maxInFlight) {
      const data = this.take(Math.min(this.pendingBytes, this.options.maxPostBytes));
      this.inFlight++;
      Promise.resolve(this.post(data)).then(
        () => this.settle(),
        () => this.settle(),
      );
    }
  }

  private settle(): void {
    this.inFlight--;
    this.update();
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

/** Where the direct channel's pump writes: one message of several chunks; false means "full, wait for drain". */
export interface MessageSink {
  send(chunks: readonly Uint8Array[], length: number): boolean;
  onDrain(listener: () => void): void;
}

/**
 * How many bytes the direct channel keeps on the way to a webview that has not acknowledged them:
 * about a third of a second of the flood at its fastest. A socket's own buffers on loopback grow
 * to megabytes, which a renderer behind on a busy machine drained for seconds after the panel
 * was hidden (and which a key's echo queued behind while it showed).
 */
export const DIRECT_WINDOW_BYTES = 512 * 1024;

/**
 * How many messages the direct channel keeps on the way to the webview before the next waits for
 * an acknowledgement. One: what arrives from the relay while the webview is busy with a message
 * goes out as one bigger message once it is done, instead of one message per read (each a
 * socket write and an acknowledgement here, and a message event and a hop in the browser). The
 * webview cannot take bytes sooner than it finishes the last message, so nothing waits longer.
 */
export const DIRECT_MAX_MESSAGES = 1;

/**
 * ...unless fewer bytes than this are on the way: then what arrives goes out at once. A key's echo
 * can reach the host in two reads (its rectangle, then the LastRect a moment later); held for the
 * first read's acknowledgement, noVNC drew it one round trip to the webview late (7-24 ms on a
 * busy machine, in 3-5 % of keys: the key latency's p95). A flood's messages are far larger, so
 * it still goes one message at a time.
 */
export const DIRECT_SMALL_BYTES = 16 * 1024;

/**
 * Moves a relay's stdout into the direct channel's socket: no copies (the chunks go out behind
 * one frame header), at most `maxMessages` messages unacknowledged (more while fewer than
 * `smallBytes` are), each carrying all that arrived meanwhile. Until the webview's socket is attached, the relay's first bytes wait here
 * and the relay is not read further; nor is it while `window` bytes or more are unacknowledged
 * or waiting (`acked`).
 */
export class SocketPump extends SourcePump {
  private sink: MessageSink | undefined;
  private full = false;
  /** Sent and not yet acknowledged by the webview. */
  private unacked = 0;
  /** Messages sent and not yet acknowledged (the webview acknowledges each message once). */
  private unackedMessages = 0;

  constructor(
    source: Readable,
    private readonly window = DIRECT_WINDOW_BYTES,
    private readonly maxMessages = DIRECT_MAX_MESSAGES,
    private readonly smallBytes = DIRECT_SMALL_BYTES,
  ) {
    super(source);
  }

  attach(sink: MessageSink): void {
    this.sink = sink;
    this.update();
  }

  /** The webview handed `bytes` more to noVNC: one message's worth. */
  acked(bytes: number): void {
    this.unacked = Math.max(0, this.unacked - bytes);
    this.unackedMessages = Math.max(0, this.unackedMessages - 1);
    this.update();
  }

  protected blocked(): boolean {
    // While a message is on the way the bytes behind it wait here: they count against the window too.
    return !this.sink || this.full || this.unacked + (this.waiting() ? this.pendingBytes : 0) >= this.window;
  }

  /** Bytes wait, and the relay is still read, while a message (not a small one) is on the way. */
  protected waiting(): boolean {
    return this.unackedMessages >= this.maxMessages && this.unacked >= this.smallBytes;
  }

  protected mayResume(): boolean {
    return true;
  }

  protected drain(): void {
    const sink = this.sink;
    if (!sink || this.full || this.pendingBytes === 0 || this.waiting()) {
      return;
    }
    const chunks = this.pending;
    const length = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.unacked += length;
    this.unackedMessages++;
    if (!sink.send(chunks, length)) {
      this.full = true;
      sink.onDrain(() => {
        this.full = false;
        this.update();
      });
    }
  }
}
