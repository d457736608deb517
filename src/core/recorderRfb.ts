// The recorder's RFB client: a shared, view-only RFB 3.8 client that reads the server's stream
// message by message without decoding pixels. It never sends an input event (no KeyEvent,
// PointerEvent or ClientCutText exist in its vocabulary): only the handshake, SetPixelFormat,
// SetEncodings and FramebufferUpdateRequest. It asks for exactly the pixel format noVNC asks for
// and only encodings noVNC decodes, so the recorded bytes replay in noVNC as they are. Message
// framing is rfbServerStream.ts's, shared with the external-viewer port.

import {
  ENC_COPYRECT,
  ENC_RAW,
  ENC_TIGHT,
  ENC_ZRLE,
  MSG_SERVER_CUT_TEXT,
  PSEUDO_DESKTOP_SIZE,
  PSEUDO_EXTENDED_DESKTOP_SIZE,
  PSEUDO_LAST_RECT,
  RfbProtocolError,
  StreamFeeder,
  read,
  reason,
  serverMessages,
  u16,
  u32,
  type PixelFormat,
  type ServerMessageEvents,
  type StreamParser,
} from './rfbServerStream';

/** What the client tells its owner as the stream goes by. */
export interface RfbClientEvents extends ServerMessageEvents {
  /** Bytes for the server (handshake answers, requests). */
  send(bytes: Uint8Array): void;
  /** ServerInit arrived: the session is set up. */
  ready(width: number, height: number): void;
}

export { MSG_SERVER_CUT_TEXT, RfbProtocolError };

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

const NOVNC_PIXEL_FORMAT: PixelFormat = { bitsPerPixel: 32, tightThreeBytes: true };

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

const latin1 = new TextDecoder('latin1');

/**
 * The client as a generator: it yields what it needs of the stream and gets the bytes it asked
 * to read (nothing for a skip). Runs the handshake (security type None only: the screen's socket
 * is 0600 inside the sandbox), then frames server messages forever.
 */
export function* rfbClient(events: RfbClientEvents): StreamParser {
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
  yield { skip: u32(init, 20) }; // the desktop's name
  events.send(setPixelFormat());
  events.send(setEncodings());
  events.ready(u16(init, 0), u16(init, 2));
  yield* serverMessages(events, () => NOVNC_PIXEL_FORMAT);
}

/** Feeds chunks of the server's stream to the recorder's client (`position`: see StreamFeeder). */
export class RfbStreamFeeder extends StreamFeeder {
  constructor(events: RfbClientEvents) {
    super(rfbClient(events));
  }
}
