// Framing of the server-to-client RFB stream: finds where each server message starts and ends
// without decoding a pixel, for every encoding and pseudo-encoding `FRAMED_ENCODINGS` lists, in
// any true-colour or colour-map pixel format. Two readers use it: the recorder's own view-only
// client (recorderRfb.ts) and the external-viewer port's filter (serverCutTextFilter.ts), which must
// know message boundaries to drop the screen's clipboard text for a viewer not in control.

/** What the parser asks of the byte stream next: `read` n bytes into a buffer, or `skip` n. */
export type Want = { readonly read: number } | { readonly skip: number };

/** A parser: yields what it needs and gets the bytes it asked to read (nothing for a skip). */
export type StreamParser = Generator<Want, void, Uint8Array | undefined>;

export class RfbProtocolError extends Error {}

/** The parts of a pixel format that decide how many bytes a pixel takes on the wire. */
export interface PixelFormat {
  readonly bitsPerPixel: number;
  /**
   * Tight sends 3-byte pixels (TPIXEL): true colour, 32 bits per pixel, depth 24, and red, green
   * and blue exactly 8 bits wide each (rfbproto; TigerVNC's PixelFormat::is888).
   */
  readonly tightThreeBytes: boolean;
}

/** The pixel format in a ServerInit or SetPixelFormat, from the byte where it starts. */
export function pixelFormatAt(bytes: Uint8Array, at: number): PixelFormat {
  const bitsPerPixel = bytes[at];
  if (![8, 16, 32].includes(bitsPerPixel)) {
    throw new RfbProtocolError(`unsupported pixel format: ${bitsPerPixel} bits per pixel`);
  }
  const trueColour = bytes[at + 3] !== 0;
  const eightBits = [4, 6, 8].every((offset) => u16(bytes, at + offset) === 255);
  return { bitsPerPixel, tightThreeBytes: trueColour && bitsPerPixel === 32 && bytes[at + 1] === 24 && eightBits };
}

/** What a framer tells its owner as the stream goes by. */
export interface ServerMessageEvents {
  /** A server message of `type` starts at the current stream position (its type byte just read). */
  messageStart(type: number): void;
  /** The message that started last ends at the current stream position. */
  messageEnd(type: number): void;
  /**
   * A FramebufferUpdate ended (after messageEnd). `pixels`: it held a pixel rectangle, not only
   * pseudo-rectangles (Xvnc answers a new client's first request with an update that holds only
   * its ExtendedDesktopSize, and the picture in the next one).
   */
  updateEnd(pixels: boolean): void;
  /** The screen changed size (DesktopSize / ExtendedDesktopSize). */
  resized(width: number, height: number): void;
  /**
   * A ServerCutText's header was read (its text not yet): `extendedFlags` is the extended
   * clipboard's flags word, undefined for legacy Latin-1 text.
   */
  cutText?(extendedFlags: number | undefined): void;
}

export const MSG_FRAMEBUFFER_UPDATE = 0;
export const MSG_COLOUR_MAP = 1;
export const MSG_BELL = 2;
export const MSG_SERVER_CUT_TEXT = 3;
export const MSG_END_OF_CONTINUOUS_UPDATES = 150;
export const MSG_SERVER_FENCE = 248;
export const MSG_XVP = 250;

export const ENC_RAW = 0;
export const ENC_COPYRECT = 1;
const ENC_RRE = 2;
const ENC_HEXTILE = 5;
export const ENC_TIGHT = 7;
export const ENC_ZRLE = 16;
export const PSEUDO_DESKTOP_SIZE = -223;
export const PSEUDO_LAST_RECT = -224;
const PSEUDO_CURSOR = -239;
const PSEUDO_X_CURSOR = -240;
const PSEUDO_QEMU_EXTENDED_KEY_EVENT = -258;
const PSEUDO_LED_STATE = -261;
const PSEUDO_DESKTOP_NAME = -307;
export const PSEUDO_EXTENDED_DESKTOP_SIZE = -308;
const PSEUDO_XVP = -309;
const PSEUDO_FENCE = -312;
const PSEUDO_CONTINUOUS_UPDATES = -313;
const PSEUDO_CURSOR_WITH_ALPHA = -314;
const PSEUDO_EXTENDED_CLIPBOARD = 0xc0a1e5ce | 0;
const PSEUDO_VMWARE_CURSOR = 0x574d5664;
const PSEUDO_VMWARE_CURSOR_POSITION = 0x574d5666;
const PSEUDO_VMWARE_LED_STATE = 0x574d5668;

/**
 * Whether a client may ask for `encoding`: the encodings this framer can follow, and the
 * pseudo-encodings that never appear in the stream (quality, compression, JPEG fine quality and
 * subsampling levels). A server sends only what the client asked for (and Raw), so a client's
 * SetEncodings filtered through this keeps the whole stream framable.
 */
export function framedEncoding(encoding: number): boolean {
  return (
    FRAMED_ENCODINGS.has(encoding) ||
    (encoding >= -32 && encoding <= -23) || // quality level
    (encoding >= -256 && encoding <= -247) || // compress level
    (encoding >= -512 && encoding <= -412) || // JPEG fine quality level
    (encoding >= -768 && encoding <= -763) // JPEG subsampling level
  );
}

const FRAMED_ENCODINGS: ReadonlySet<number> = new Set([
  ENC_RAW,
  ENC_COPYRECT,
  ENC_RRE,
  ENC_HEXTILE,
  ENC_TIGHT,
  ENC_ZRLE,
  PSEUDO_DESKTOP_SIZE,
  PSEUDO_LAST_RECT,
  PSEUDO_CURSOR,
  PSEUDO_X_CURSOR,
  PSEUDO_QEMU_EXTENDED_KEY_EVENT,
  PSEUDO_LED_STATE,
  PSEUDO_DESKTOP_NAME,
  PSEUDO_EXTENDED_DESKTOP_SIZE,
  PSEUDO_XVP,
  PSEUDO_FENCE,
  PSEUDO_CONTINUOUS_UPDATES,
  PSEUDO_CURSOR_WITH_ALPHA,
  PSEUDO_EXTENDED_CLIPBOARD,
  PSEUDO_VMWARE_CURSOR,
  PSEUDO_VMWARE_CURSOR_POSITION,
  PSEUDO_VMWARE_LED_STATE,
]);

/**
 * Frames server messages forever. `pixelFormat` is asked at the start of each FramebufferUpdate
 * (the client's format can change between updates, never inside one).
 */
export function* serverMessages(events: ServerMessageEvents, pixelFormat: () => PixelFormat): StreamParser {
  for (;;) {
    const type = (yield* read(1))[0];
    events.messageStart(type);
    switch (type) {
      case MSG_FRAMEBUFFER_UPDATE: {
        const pf = pixelFormat();
        const rects = u16(yield* read(3), 1);
        let pixels = false;
        for (let i = 0; i < rects; i++) {
          const rect = yield* read(12);
          const w = u16(rect, 4);
          const h = u16(rect, 6);
          const encoding = s32(rect, 8);
          if (encoding === PSEUDO_LAST_RECT) {
            break;
          }
          if (encoding === PSEUDO_DESKTOP_SIZE) {
            events.resized(w, h);
          } else if (encoding === PSEUDO_EXTENDED_DESKTOP_SIZE) {
            const screens = (yield* read(4))[0];
            yield { skip: 16 * screens };
            // y is the status: a refused request changes nothing.
            if (u16(rect, 2) === 0) {
              events.resized(w, h);
            }
          } else {
            pixels ||= encoding >= 0;
            yield* rectBody(encoding, w, h, pf);
          }
        }
        events.messageEnd(type);
        events.updateEnd(pixels);
        continue;
      }
      case MSG_COLOUR_MAP:
        yield { skip: 6 * u16(yield* read(5), 3) };
        break;
      case MSG_BELL:
      case MSG_END_OF_CONTINUOUS_UPDATES:
        break;
      case MSG_SERVER_CUT_TEXT: {
        const length = s32(yield* read(7), 3);
        if (length >= 0) {
          events.cutText?.(undefined);
          yield { skip: length };
        } else {
          if (-length < 4) {
            throw new RfbProtocolError(`extended clipboard message of ${-length} bytes`);
          }
          events.cutText?.(u32(yield* read(4), 0));
          yield { skip: -length - 4 };
        }
        break;
      }
      case MSG_SERVER_FENCE:
        yield { skip: (yield* read(8))[7] }; // padding, flags, payload length
        break;
      case MSG_XVP:
        yield { skip: 3 };
        break;
      default:
        throw new RfbProtocolError(`unexpected server message ${type}`);
    }
    events.messageEnd(type);
  }
}

function* rectBody(encoding: number, w: number, h: number, pf: PixelFormat): StreamParser {
  const pixel = pf.bitsPerPixel / 8;
  switch (encoding) {
    case ENC_RAW:
      yield { skip: w * h * pixel };
      return;
    case ENC_COPYRECT:
      yield { skip: 4 };
      return;
    case ENC_RRE:
      yield { skip: pixel + u32(yield* read(4), 0) * (pixel + 8) };
      return;
    case ENC_HEXTILE:
      yield* hextile(w, h, pixel);
      return;
    case ENC_ZRLE:
      yield { skip: u32(yield* read(4), 0) };
      return;
    case ENC_TIGHT:
      yield* tight(w, h, pf);
      return;
    case PSEUDO_CURSOR:
      yield { skip: w * h * pixel + Math.ceil(w / 8) * h };
      return;
    case PSEUDO_X_CURSOR:
      yield { skip: w * h > 0 ? 6 + 2 * Math.ceil(w / 8) * h : 0 };
      return;
    case PSEUDO_CURSOR_WITH_ALPHA: {
      const inner = s32(yield* read(4), 0);
      if (inner !== ENC_RAW) {
        throw new RfbProtocolError(`unexpected cursor encoding ${inner}`);
      }
      yield { skip: w * h * 4 };
      return;
    }
    case PSEUDO_VMWARE_CURSOR: {
      const kind = (yield* read(2))[0];
      yield { skip: kind === 0 ? 2 * w * h * pixel : w * h * 4 };
      return;
    }
    case PSEUDO_LED_STATE:
      yield { skip: 1 };
      return;
    case PSEUDO_VMWARE_LED_STATE:
      yield { skip: 4 };
      return;
    case PSEUDO_DESKTOP_NAME:
      yield { skip: u32(yield* read(4), 0) };
      return;
    case PSEUDO_QEMU_EXTENDED_KEY_EVENT:
    case PSEUDO_VMWARE_CURSOR_POSITION:
      return; // the rectangle header is the whole of it (an acknowledgement, a position)
    default:
      throw new RfbProtocolError(`unexpected encoding ${encoding}`);
  }
}

const HEXTILE_RAW = 1;
const HEXTILE_BACKGROUND = 2;
const HEXTILE_FOREGROUND = 4;
const HEXTILE_ANY_SUBRECTS = 8;
const HEXTILE_SUBRECTS_COLOURED = 16;

function* hextile(w: number, h: number, pixel: number): StreamParser {
  for (let y = 0; y < h; y += 16) {
    for (let x = 0; x < w; x += 16) {
      const flags = (yield* read(1))[0];
      if (flags & HEXTILE_RAW) {
        yield { skip: Math.min(16, w - x) * Math.min(16, h - y) * pixel };
        continue;
      }
      let size = (flags & HEXTILE_BACKGROUND ? pixel : 0) + (flags & HEXTILE_FOREGROUND ? pixel : 0);
      if (size > 0) {
        yield { skip: size };
      }
      if (flags & HEXTILE_ANY_SUBRECTS) {
        size = (yield* read(1))[0] * (flags & HEXTILE_SUBRECTS_COLOURED ? pixel + 2 : 2);
        yield { skip: size };
      }
    }
  }
}

/** A Tight rectangle (see `tightThreeBytes` for its pixel size). */
function* tight(w: number, h: number, pf: PixelFormat): StreamParser {
  const pixel = pf.tightThreeBytes ? 3 : pf.bitsPerPixel / 8;
  const control = (yield* read(1))[0];
  const kind = control >> 4;
  if (kind === 0x08) {
    yield { skip: pixel }; // fill
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
  let rowBytes = w * pixel;
  if (filter === 1) {
    const colours = (yield* read(1))[0] + 1;
    yield { skip: colours * pixel };
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

/** A failure's reason string (a u32 length and UTF-8 text). */
export function* reason(): Generator<Want, string, Uint8Array | undefined> {
  const length = u32(yield* read(4), 0);
  return new TextDecoder().decode(yield* read(length));
}

export function* read(n: number): Generator<Want, Uint8Array, Uint8Array | undefined> {
  const bytes = yield { read: n };
  if (!bytes || bytes.length !== n) {
    throw new RfbProtocolError('short read');
  }
  return bytes;
}

export function u16(bytes: Uint8Array, at: number): number {
  return (bytes[at] << 8) | bytes[at + 1];
}

export function u32(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at);
}

function s32(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(at);
}

/**
 * Feeds chunks of a stream to a parser. `position` is the offset in the chunk being fed, valid
 * inside event callbacks (where a message starts or ends).
 */
export class StreamFeeder {
  private want: Want | undefined;
  private pending: Uint8Array | undefined;
  private filled = 0;
  private skipLeft = 0;
  position = 0;

  constructor(private readonly parser: StreamParser) {
    this.advance(undefined);
  }

  /** Throws RfbProtocolError on a stream the parser cannot follow. */
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
