// The server-to-client half of an external viewer's connection: passes the screen's RFB stream to
// a native VNC viewer message by message and drops the screen's clipboard text (ServerCutText,
// legacy or extended) unless that viewer may take it now. Without it a viewer that is only
// watching would get the agent's copies in the user's clipboard: the input gate filters what a
// viewer sends, never what it receives.
//
// It follows the session as an observer: the viewer does its own handshake, the input gate (which
// sees the viewer's side) tells it the viewer's protocol version and every SetPixelFormat and
// EnableContinuousUpdates that passed, and the gate keeps the viewer's SetEncodings to what
// `framedEncoding` can follow, so every message's end is known. A stream it cannot follow is an
// error: the owner closes the connection rather than pass bytes it cannot judge.
import {
  MSG_END_OF_CONTINUOUS_UPDATES,
  MSG_SERVER_CUT_TEXT,
  RfbProtocolError,
  StreamFeeder,
  pixelFormatAt,
  read,
  reason,
  serverMessages,
  u32,
  type PixelFormat,
  type StreamParser,
} from './rfbServerStream';
import { clipboardAction, RfbClientMessage } from './rfbInputGate';

export interface ServerCutTextFilterOptions {
  /** The RFB version the viewer answered with (the gate saw it), once it has. */
  readonly clientVersion: () => 3.3 | 3.7 | 3.8 | undefined;
  /** Whether the screen's clipboard text may reach this viewer now (it holds control, the policy allows it). */
  readonly mayReceive: () => boolean;
}

/**
 * Whether a server clipboard message may pass: a legacy text or an extended Notify or Provide
 * only when `mayReceive`; the extended Caps (no text: the viewer must learn the server speaks
 * UTF-8) and Request or Peek (the server asks for the viewer's clipboard, whose answer passes the
 * input gate only under control) always; anything else never.
 */
export function serverCutTextPasses(extendedFlags: number | undefined, mayReceive: () => boolean): boolean {
  if (extendedFlags === undefined) {
    return mayReceive();
  }
  switch (clipboardAction(extendedFlags)) {
    case 'caps':
    case 'request':
    case 'peek':
      return true;
    case 'notify':
    case 'provide':
      return mayReceive();
    default:
      return false;
  }
}

export class ServerCutTextFilter {
  private readonly feeder: StreamFeeder;
  private pixelFormat: PixelFormat | undefined;
  /** A SetPixelFormat sent while continuous updates run or are ending: it applies after the server's EndOfContinuousUpdates. */
  private pendingFormat: PixelFormat | undefined;
  /** The viewer switched continuous updates on and not off. */
  private continuousUpdates = false;
  /** The viewer switched them off: updates may still come until the server's EndOfContinuousUpdates. */
  private continuousUpdatesEnding = false;
  /** A client message that made the stream unfollowable; thrown by the next push. */
  private failure: RfbProtocolError | undefined;
  /** The session ended (a refusal): nothing more may come. */
  private ended = false;
  /** Bytes of the chunk being fed that are decided but not yet output start here. */
  private from = 0;
  private chunk: Uint8Array = new Uint8Array(0);
  private out: Uint8Array[] = [];
  /** pass: bytes go out; hold: a ServerCutText's header, kept until it is judged; drop: its bytes go nowhere. */
  private mode: 'pass' | 'hold' | 'drop' = 'pass';
  private held: Uint8Array[] = [];
  /** ServerCutText messages kept from the viewer so far. */
  dropped = 0;

  constructor(private readonly options: ServerCutTextFilterOptions) {
    this.feeder = new StreamFeeder(this.session());
  }

  /** The bytes of `chunk` the viewer may have, in order. Throws RfbProtocolError on a stream it cannot follow. */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.failure) {
      throw this.failure;
    }
    if (this.ended && chunk.length > 0) {
      throw new RfbProtocolError('the server went on after it ended the session');
    }
    this.chunk = chunk;
    this.from = 0;
    this.out = [];
    this.feeder.feed(chunk);
    if (this.ended && this.feeder.position < chunk.length) {
      throw new RfbProtocolError('the server went on after it ended the session');
    }
    const rest = chunk.subarray(this.from);
    if (rest.length > 0) {
      if (this.mode === 'pass') {
        this.out.push(rest);
      } else if (this.mode === 'hold') {
        this.held.push(rest);
      }
    }
    this.chunk = new Uint8Array(0);
    return this.out;
  }

  /**
   * A client message the input gate passed to the server (only the ones that change how the
   * stream is framed matter). Never throws: a message that makes the stream unfollowable fails
   * the next `push`, so the owner closes the connection there.
   */
  clientMessage(message: Uint8Array): void {
    if (message[0] === RfbClientMessage.SetPixelFormat) {
      let format: PixelFormat;
      try {
        format = pixelFormatAt(message, 4);
      } catch (err) {
        this.failure = err instanceof RfbProtocolError ? err : new RfbProtocolError(String(err));
        return;
      }
      // A viewer changes format only with no update outstanding (rfbproto), so in request mode
      // the next update is in the new one. With continuous updates the viewer switches them off
      // first, and the server's EndOfContinuousUpdates marks where the new format starts.
      if (this.continuousUpdates || this.continuousUpdatesEnding) {
        this.pendingFormat = format;
      } else {
        this.pixelFormat = format;
      }
    } else if (message[0] === RfbClientMessage.EnableContinuousUpdates) {
      if (message[1] !== 0) {
        this.continuousUpdates = true;
      } else if (this.continuousUpdates) {
        this.continuousUpdates = false;
        this.continuousUpdatesEnding = true;
      }
    }
  }

  private *session(): StreamParser {
    const banner = String.fromCharCode(...(yield* read(12)));
    const offered = /^RFB 003\.00([378])\n$/.exec(banner);
    if (!offered) {
      throw new RfbProtocolError(`unsupported server version ${JSON.stringify(banner)}`);
    }
    // The server says more only after the viewer's version, which went through the gate: what
    // follows the banner is framed by that version, known once its first byte is here.
    const first = (yield* read(1))[0];
    const asked = this.options.clientVersion();
    if (asked === undefined) {
      throw new RfbProtocolError('the server went on before the viewer chose a protocol version');
    }
    // The session speaks the lower of the two versions.
    const version = Math.min(asked, Number(`3.${offered[1]}`));
    if (version === 3.3) {
      const rest = yield* read(3);
      const type = u32(Uint8Array.of(first, ...rest), 0);
      if (type === 0) {
        yield* reason();
        this.ended = true; // refused: the reason is the last thing the server says
        return;
      }
      if (type !== 1) {
        throw new RfbProtocolError(`unexpected security type ${type}`);
      }
    } else {
      const count = first;
      if (count === 0) {
        yield* reason();
        this.ended = true;
        return;
      }
      yield { skip: count };
      // The gate lets the viewer pick None only; 3.7 sends no SecurityResult for None.
      if (version === 3.8 && u32(yield* read(4), 0) !== 0) {
        yield* reason();
        this.ended = true;
        return;
      }
    }
    const init = yield* read(24);
    this.pixelFormat ??= pixelFormatAt(init, 4);
    yield { skip: u32(init, 20) }; // the desktop's name
    yield* serverMessages(
      {
        messageStart: (type) => this.messageStart(type),
        messageEnd: (type) => this.messageEnd(type),
        updateEnd: () => undefined,
        resized: () => undefined,
        cutText: (flags) => this.judge(serverCutTextPasses(flags, this.options.mayReceive)),
      },
      () => this.pixelFormat!,
    );
  }

  private messageStart(type: number): void {
    if (type === MSG_SERVER_CUT_TEXT) {
      const at = this.feeder.position - 1; // the type byte, always in this chunk
      this.out.push(this.chunk.subarray(this.from, at));
      this.from = at;
      this.mode = 'hold';
    } else if (type === MSG_END_OF_CONTINUOUS_UPDATES) {
      this.continuousUpdatesEnding = false;
      if (this.pendingFormat) {
        this.pixelFormat = this.pendingFormat;
        this.pendingFormat = undefined;
      }
    }
  }

  private judge(passes: boolean): void {
    const at = this.feeder.position;
    if (passes) {
      this.out.push(...this.held, this.chunk.subarray(this.from, at));
      this.mode = 'pass';
    } else {
      this.dropped++;
      this.mode = 'drop';
    }
    this.held = [];
    this.from = at;
  }

  private messageEnd(type: number): void {
    if (type === MSG_SERVER_CUT_TEXT && this.mode === 'drop') {
      this.from = this.feeder.position;
      this.mode = 'pass';
    }
  }
}
