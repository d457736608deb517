// The recorder's RFB client: a shared, view-only RFB 3.8 client that reads the server's stream
// message by message without decoding pixels. It never sends an input event (no KeyEvent,
// PointerEvent or ClientCutText exist in its vocabulary): only the handshake, SetPixelFormat,
// SetEncodings and FramebufferUpdateRequest. It asks for exactly the pixel format noVNC asks for
// and only encodings noVNC decodes, so the recorded bytes replay in noVNC as they are.

/** What the parser asks of the byte stream next: `read` n bytes into a buffer, or `skip` n. */
export type Want = { readonly read: number } | { readonly skip: number };

/** What the client tells its owner as the stream goes by. */
export interface RfbClientEvents {
  /** Bytes for the server (handshake answers, requests). */
  send(bytes: Uint8Array): void;
  /** ServerInit arrived: the session is set up. */
  ready(width: number, height: number): void;
  /** A server message of `type` starts at the current stream position. */
  messageStart(type: number): void;
  /** The message that started last ends at the current stream position. */
  messageEnd(type: number): void;
  /** A FramebufferUpdate ended (after messageEnd). */
  updateEnd(): void;
  /** The screen changed size (DesktopSize / ExtendedDesktopSize). */
  resized(width: number, height: number): void;
}

export class RfbProtocolError extends Error {}

const MSG_FRAMEBUFFER_UPDATE = 0;
const MSG_COLOUR_MAP = 1;
const MSG_BELL = 2;
export const MSG_SERVER_CUT_TEXT = 3;

const ENC_RAW = 0;
const ENC_COPYRECT = 1;
const ENC_TIGHT = 7;
const ENC_ZRLE = 16;
const PSEUDO_DESKTOP_SIZE = -223;
const PSEUDO_LAST_RECT = -224;
const PSEUDO_EXTENDED_DESKTOP_SIZE = -308;
/** JPEG quality 6 and zlib level 2: noVNC's own defaults. */
const PSEUDO_QUALITY = -32 + 6;
const PSEUDO_COMPRESS = -256 + 2;

/**
 * The encodings the recorder asks for, best first. No cursor pseudo-encoding: the server then
 * draws the pointer into the picture, so replay shows where it was. Nothing that needs an answer
 * (Fence, ContinuousUpdates) and no clipboard extension.
 */
export const RECORDER_ENCODINGS = [
  ENC_TIGHT,
  ENC_ZRLE,
  ENC_COPYRECT,
  ENC_RAW,
  PSEUDO_QUALITY,
  PSEUDO_COMPRESS,
  PSEUDO_DESKTOP_SIZE,
  PSEUDO_LAST_RECT,
  PSEUDO_EXTENDED_DESKTOP_SIZE,
];

/** noVNC's pixel format (core/rfb.js `messages.pixelFormat` at depth 24): 32 bpp, little-endian, RGB at shifts 0/8/16. */
export function setPixelFormat(): Uint8Array {
  return Uint8Array.from([0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0]);
}

export function setEncodings(encodings: readonly number[] = RECORDER_ENCODINGS): Uint8Array {
  const out = new Uint8Array(4 + 4 * encodings.length);
  const view = new DataView(out.buffer);
  view.setUint8(0, 2);
  view.setUint16(2, encodings.length);
  encodings.forEach((encoding, index) => view.setInt32(4 + 4 * index, encoding));
  return out;
}

export function updateRequest(incremental: boolean, width: number, height: number): Uint8Array {
  const out = new Uint8Array(10);
  const view = new DataView(out.buffer);
  view.setUint8(0, 3);
  view.setUint8(1, incremental ? 1 : 0);
  view.setUint16(6, width);
  view.setUint16(8, height);
  return out;
}

const latin1 = new TextDecoder('latin1');

/**
 * The client as a generator: it yields what it needs of the stream and gets the bytes it asked
 * to read (nothing for a skip). Runs the handshake (security type None only: the screen's socket
 * is 0600 inside the sandbox), then frames server messages forever.
 */
export function* rfbClient(events: RfbClientEvents): Generator<Want, void, Uint8Array | undefined> {
  const banner = latin1.decode(yield* read(12));
  if (!/^RFB 003\.00[89]\n$/.test(banner)) {
    throw new RfbProtocolError(`unsupported server version ${JSON.stringify(banner)}`);
  }
  events.send(new TextEncoder().encode('RFB 003.008\n'));
  const count = (yield* read(1))[0];
  if (count === 0) {
    throw new RfbProtocolError(`server refused: ${yield* reason()}`);
  }
  const types = yield* read(count);
  if (!types.includes(1)) {
    throw new RfbProtocolError(`the server offers no security type the recorder can use (${[...types].join(', ')})`);
  }
  events.send(Uint8Array.of(1));
  if (u32(yield* read(4), 0) !== 0) {
    throw new RfbProtocolError(`security failed: ${yield* reason()}`);
  }
  events.send(Uint8Array.of(1)); // ClientInit: shared, so no viewer is disconnected
  const init = yield* read(24);
  let width = u16(init, 0);
  let height = u16(init, 2);
  yield { skip: u32(init, 20) }; // the desktop's name
  events.send(setPixelFormat());
  events.send(setEncodings());
  events.ready(width, height);
  for (;;) {
    const type = (yield* read(1))[0];
    events.messageStart(type);
    switch (type) {
      case MSG_FRAMEBUFFER_UPDATE: {
        const rects = u16(yield* read(3), 1);
        for (let i = 0; i < rects; i++) {
          const rect = yield* read(12);
          const w = u16(rect, 4);
          const h = u16(rect, 6);
          const encoding = new DataView(rect.buffer, rect.byteOffset, 12).getInt32(8);
          if (encoding === PSEUDO_LAST_RECT) {
            break;
          }
          if (encoding === PSEUDO_DESKTOP_SIZE) {
            [width, height] = [w, h];
            events.resized(w, h);
          } else if (encoding === PSEUDO_EXTENDED_DESKTOP_SIZE) {
            const screens = (yield* read(4))[0];
            yield { skip: 16 * screens };
            // y is the status: a refused request changes nothing.
            if (u16(rect, 2) === 0) {
              [width, height] = [w, h];
              events.resized(w, h);
            }
          } else {
            yield* rectBody(encoding, w, h);
          }
        }
        events.messageEnd(type);
        events.updateEnd();
        continue;
      }
      case MSG_COLOUR_MAP:
        yield { skip: 6 * u16(yield* read(5), 3) };
        break;
      case MSG_BELL:
        break;
      case MSG_SERVER_CUT_TEXT:
        yield { skip: u32(yield* read(7), 3) };
        break;
      default:
        throw new RfbProtocolError(`unexpected server message ${type}`);
    }
    events.messageEnd(type);
  }
}

function* rectBody(encoding: number, w: number, h: number): Generator<Want, void, Uint8Array | undefined> {
  switch (encoding) {
    case ENC_RAW:
      yield { skip: w * h * 4 };
      return;
    case ENC_COPYRECT:
      yield { skip: 4 };
      return;
    case ENC_ZRLE:
      yield { skip: u32(yield* read(4), 0) };
      return;
    case ENC_TIGHT:
      yield* tight(w, h);
      return;
    default:
      throw new RfbProtocolError(`unexpected encoding ${encoding}`);
  }
}

/** A Tight rectangle (TPIXELs are 3 bytes in noVNC's 24-bit true-colour format). */
function* tight(w: number, h: number): Generator<Want, void, Uint8Array | undefined> {
  const control = (yield* read(1))[0];
  const kind = control >> 4;
  if (kind === 0x08) {
    yield { skip: 3 }; // fill
    return;
  }
  if (kind === 0x09) {
    yield { skip: yield* compactLength() }; // JPEG
    return;
  }
  if (kind > 0x07) {
    throw new RfbProtocolError(`unexpected Tight compression ${kind}`);
  }
  const filter = control & 0x40 ? (yield* read(1))[0] : 0;
  let rowBytes = w * 3;
  if (filter === 1) {
    const colours = (yield* read(1))[0] + 1;
    yield { skip: colours * 3 };
    rowBytes = colours === 2 ? Math.ceil(w / 8) : w;
  } else if (filter !== 0 && filter !== 2) {
    throw new RfbProtocolError(`unexpected Tight filter ${filter}`);
  }
  const size = rowBytes * h;
  // Fewer than 12 bytes travel uncompressed, without a length.
  yield { skip: size < 12 ? size : yield* compactLength() };
}

function* compactLength(): Generator<Want, number, Uint8Array | undefined> {
  let byte = (yield* read(1))[0];
  let length = byte & 0x7f;
  if (byte & 0x80) {
    byte = (yield* read(1))[0];
    length |= (byte & 0x7f) << 7;
    if (byte & 0x80) {
      length |= (yield* read(1))[0] << 14;
    }
  }
  return length;
}

function* reason(): Generator<Want, string, Uint8Array | undefined> {
  const length = u32(yield* read(4), 0);
  return new TextDecoder().decode(yield* read(length));
}

function* read(n: number): Generator<Want, Uint8Array, Uint8Array | undefined> {
  const bytes = yield { read: n };
  if (!bytes || bytes.length !== n) {
    throw new RfbProtocolError('short read');
  }
  return bytes;
}

function u16(bytes: Uint8Array, at: number): number {
  return (bytes[at] << 8) | bytes[at + 1];
}

function u32(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at);
}

/**
 * Feeds chunks of the server's stream to the client generator. `position` is the offset in the
 * chunk being fed, valid inside event callbacks (where a message starts or ends).
 */
export class RfbStreamFeeder {
  private readonly parser: Generator<Want, void, Uint8Array | undefined>;
  private want: Want | undefined;
  private pending: Uint8Array | undefined;
  private filled = 0;
  private skipLeft = 0;
  position = 0;

  constructor(events: RfbClientEvents) {
    this.parser = rfbClient(events);
    this.advance(undefined);
  }

  /** Throws RfbProtocolError on a stream the recorder cannot follow. */
  feed(chunk: Uint8Array): void {
    this.position = 0;
    while (this.position < chunk.length) {
      const want = this.want;
      if (!want) {
        return;
      }
      if ('skip' in want) {
        const step = Math.min(this.skipLeft, chunk.length - this.position);
        this.skipLeft -= step;
        this.position += step;
        if (this.skipLeft === 0) {
          this.advance(undefined);
        }
      } else {
        const buffer = this.pending!;
        const step = Math.min(want.read - this.filled, chunk.length - this.position);
        buffer.set(chunk.subarray(this.position, this.position + step), this.filled);
        this.filled += step;
        this.position += step;
        if (this.filled === want.read) {
          this.advance(buffer);
        }
      }
    }
  }

  private advance(value: Uint8Array | undefined): void {
    for (;;) {
      const next = this.parser.next(value);
      if (next.done) {
        this.want = undefined;
        return;
      }
      const want = next.value;
      if ('skip' in want) {
        if (want.skip === 0) {
          value = undefined;
          continue;
        }
        this.skipLeft = want.skip;
      } else {
        if (want.read === 0) {
          value = new Uint8Array(0);
          continue;
        }
        this.pending = new Uint8Array(want.read);
        this.filled = 0;
      }
      this.want = want;
      return;
    }
  }
}
