/**
 * The direct channel: a loopback WebSocket server (RFC 6455, binary messages, no extensions) that
 * carries one viewer's RFB bytes between its webview and the bridge process (./bridgeProcess.ts), without VS Code's
 * message hops (server websocket with deflate, workbench, webview host frame). The webview's text
 * messages acknowledge the bytes it consumed (flow control, ./directProtocol.ts); the server's one
 * text message tells a revealed webview that it shows, ahead of VS Code's own message.
 *
 * Who may connect: the server listens on 127.0.0.1 only, on a port the kernel picks. A connection
 * is upgraded only when its path is a token we offered (256 random bits, minted per RFB session,
 * handed to the webview over VS Code's own authenticated message channel), its Origin header is
 * the one the webview reported for itself, and the token was not used before: one connection per
 * token, and the token is forgotten when its session ends. Another local user can reach the port
 * but cannot guess the token; a web page in the user's browser has another Origin and no token.
 * Everything is decided on the upgrade request, before a byte of the session is sent.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { parseAck, SUBPROTOCOL } from './directProtocol';

const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Frame opcodes (RFC 6455 §5.2). */
export const OP_CONTINUATION = 0x0;
export const OP_TEXT = 0x1;
export const OP_BINARY = 0x2;
export const OP_CLOSE = 0x8;
export const OP_PING = 0x9;
export const OP_PONG = 0xa;

/** Close codes (RFC 6455 §7.4.1). */
export const CLOSE_NORMAL = 1000;
export const CLOSE_PROTOCOL_ERROR = 1002;
export const CLOSE_UNSUPPORTED = 1003;
export const CLOSE_TOO_BIG = 1009;

/** A viewer sends keys, pointer moves and update requests: far less than this in one message. */
export const MAX_CLIENT_MESSAGE = 1 << 20;

export interface Frame {
  readonly fin: boolean;
  readonly opcode: number;
  /** Unmasked. */
  readonly payload: Buffer;
}

export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Decodes the frames a client sends. Client frames must be masked (§5.3); reserved bits must be
 * clear (no extension is ever negotiated); control frames are short and never fragmented (§5.5).
 */
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  constructor(private readonly maxPayload = MAX_CLIENT_MESSAGE) {}

  /** The complete frames in the bytes received so far; a partial frame waits for more. */
  push(chunk: Buffer): Frame[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: Frame[] = [];
    for (;;) {
      const frame = this.next();
      if (!frame) {
        return frames;
      }
      frames.push(frame);
    }
  }

  private next(): Frame | undefined {
    const b = this.buffer;
    if (b.length < 2) {
      return undefined;
    }
    const fin = (b[0] & 0x80) !== 0;
    const opcode = b[0] & 0x0f;
    if ((b[0] & 0x70) !== 0) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, 'reserved bits set');
    }
    if ((b[1] & 0x80) === 0) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, 'unmasked client frame');
    }
    let length = b[1] & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (b.length < 4) {
        return undefined;
      }
      length = b.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (b.length < 10) {
        return undefined;
      }
      const big = b.readBigUInt64BE(2);
      if (big > BigInt(this.maxPayload)) {
        throw new ProtocolError(CLOSE_TOO_BIG, 'frame too big');
      }
      length = Number(big);
      offset = 10;
    }
    if (opcode >= 0x8 && (!fin || length > 125)) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, 'bad control frame');
    }
    if (length > this.maxPayload) {
      throw new ProtocolError(CLOSE_TOO_BIG, 'frame too big');
    }
    if (b.length < offset + 4 + length) {
      return undefined;
    }
    const mask = b.subarray(offset, offset + 4);
    const payload = Buffer.from(b.subarray(offset + 4, offset + 4 + length));
    for (let i = 0; i < payload.length; i++) {
      payload[i] ^= mask[i & 3];
    }
    this.buffer = b.subarray(offset + 4 + length);
    return { fin, opcode, payload };
  }
}

/** The header of one unmasked server frame (the payload follows it as is). */
export function frameHeader(opcode: number, length: number): Buffer {
  if (length < 126) {
    return Buffer.from([0x80 | opcode, length]);
  }
  if (length < 0x10000) {
    const header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(length, 2);
    return header;
  }
  const header = Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}

/** The Sec-WebSocket-Accept for a client's key (§4.2.2). */
export function acceptKey(key: string): string {
  return createHash('sha1').update(key + WEBSOCKET_GUID).digest('base64');
}

/** One accepted connection: binary messages in and out, pings answered, closes handshaken. */
export class DirectSocket {
  private readonly decoder = new FrameDecoder();
  /** Fragments of the data message being received. */
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private closed = false;
  onMessage: (data: Buffer) => void = () => undefined;
  /** The webview handed this many more of our bytes to noVNC (./directProtocol.ts). */
  onAck: (bytes: number) => void = () => undefined;
  onClose: (code: number) => void = () => undefined;

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('close', () => this.ended(1006));
    socket.on('error', () => socket.destroy());
  }

  /** Sends the chunks as one binary message; false when the socket's buffer is full (wait for drain). */
  send(chunks: readonly Uint8Array[], length: number): boolean {
    if (this.closed) {
      return true;
    }
    this.socket.cork();
    this.socket.write(frameHeader(OP_BINARY, length));
    for (const chunk of chunks) {
      this.socket.write(chunk);
    }
    this.socket.uncork();
    return !this.socket.writableNeedDrain;
  }

  /** Sends one text message (./directProtocol.ts says which there are). */
  sendText(text: string): void {
    if (!this.closed) {
      const payload = Buffer.from(text, 'utf8');
      this.socket.write(Buffer.concat([frameHeader(OP_TEXT, payload.length), payload]));
    }
  }

  onDrain(listener: () => void): void {
    this.socket.once('drain', listener);
  }

  close(code = CLOSE_NORMAL): void {
    if (this.closed) {
      return;
    }
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.socket.end(Buffer.concat([frameHeader(OP_CLOSE, 2), payload]));
    this.ended(code);
    // A client that never answers the close does not keep the socket.
    setTimeout(() => this.socket.destroy(), 2000).unref();
  }

  /** Bytes read before this socket existed (behind the upgrade request). */
  feed(head: Buffer): void {
    if (head.length > 0) {
      this.receive(head);
    }
  }

  private receive(chunk: Buffer): void {
    if (this.closed) {
      return;
    }
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      this.close(err instanceof ProtocolError ? err.code : CLOSE_PROTOCOL_ERROR);
      return;
    }
    for (const frame of frames) {
      if (this.closed) {
        return;
      }
      this.frame(frame);
    }
  }

  private frame({ fin, opcode, payload }: Frame): void {
    switch (opcode) {
      case OP_PING:
        this.socket.write(Buffer.concat([frameHeader(OP_PONG, payload.length), payload]));
        return;
      case OP_PONG:
        return;
      case OP_CLOSE:
        this.close(CLOSE_NORMAL);
        return;
      case OP_TEXT: {
        // RFB is binary; the only text is an acknowledgement, whole in one frame. Anything else is not ours.
        const bytes = fin && this.fragments.length === 0 ? parseAck(payload.toString('latin1')) : undefined;
        if (bytes === undefined) {
          this.close(CLOSE_UNSUPPORTED);
          return;
        }
        this.onAck(bytes);
        return;
      }
      case OP_BINARY:
      case OP_CONTINUATION:
        if ((opcode === OP_BINARY) !== (this.fragments.length === 0)) {
          this.close(CLOSE_PROTOCOL_ERROR); // a new message inside a fragmented one, or a continuation of nothing
          return;
        }
        this.fragments.push(payload);
        this.fragmentBytes += payload.length;
        if (this.fragmentBytes > MAX_CLIENT_MESSAGE) {
          this.close(CLOSE_TOO_BIG);
          return;
        }
        if (fin) {
          const message = this.fragments.length === 1 ? this.fragments[0] : Buffer.concat(this.fragments);
          this.fragments = [];
          this.fragmentBytes = 0;
          this.onMessage(message);
        }
        return;
      default:
        this.close(CLOSE_PROTOCOL_ERROR);
    }
  }

  private ended(code: number): void {
    if (!this.closed) {
      this.closed = true;
      this.onClose(code);
    }
  }
}

/** Why an upgrade was refused (for the log). */
export type DirectRefusal = 'badRequest' | 'unknownToken' | 'wrongOrigin';

interface Offer {
  readonly token: Buffer;
  readonly origin: string;
  readonly accept: (socket: DirectSocket) => void;
}

/** A token the webview may connect with, once. */
export interface DirectOffer {
  /** 64 hex digits: the last segment of the URL path (a forwarder may put its own path before it). */
  readonly token: string;
  /** Forgets the token (the session ended, or the webview went the postMessage way). */
  revoke(): void;
}

/** Tokens are 256 random bits, hex in the path. */
const TOKEN_BYTES = 32;
const TOKEN = /^[0-9a-f]{64}$/;

/** A fresh token, as the URL carries it. */
export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('hex');
}

export class DirectChannelServer {
  private readonly server: Server;
  /** Offers by the SHA-256 of their token, so a lookup's timing says nothing about the token. */
  private readonly offers = new Map<string, Offer>();
  private readonly sockets = new Set<Socket>();
  private listening: Promise<number> | undefined;

  constructor(private readonly onRefused: (reason: DirectRefusal, detail: string) => void = () => undefined) {
    this.server = createServer((_req, res) => {
      res.writeHead(404, { Connection: 'close' }).end();
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.upgrade(req, socket, head));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens on 127.0.0.1 (once); resolves with the port. */
  start(): Promise<number> {
    this.listening ??= new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
    return this.listening;
  }

  /**
   * A one-time token for a webview whose documents have `origin`; `accept` gets its connection.
   * `hex`: a token made elsewhere (the extension host makes it for the bridge process, which runs
   * this server), else a fresh one.
   */
  offer(origin: string, accept: (socket: DirectSocket) => void, hex: string = newToken()): DirectOffer {
    if (!TOKEN.test(hex)) {
      throw new Error('a direct channel token is 64 hex digits');
    }
    const token = Buffer.from(hex, 'hex');
    const key = tokenKey(token.toString('hex'));
    this.offers.set(key, { token, origin, accept });
    return { token: token.toString('hex'), revoke: () => this.offers.delete(key) };
  }

  dispose(): void {
    this.offers.clear();
    this.server.close();
    for (const socket of this.sockets) {
      socket.destroy();
    }
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    // The token is the path's last segment: a port forwarder (code-server's /proxy/<port>/) may keep its prefix.
    const presented = /\/([0-9a-f]{64})$/.exec(req.url ?? '')?.[1] ?? '';
    const key = req.headers['sec-websocket-key'];
    if (
      req.method !== 'GET' ||
      req.headers.upgrade?.toLowerCase() !== 'websocket' ||
      req.headers['sec-websocket-version'] !== '13' ||
      typeof key !== 'string' ||
      !TOKEN.test(presented) ||
      !(req.headers['sec-websocket-protocol'] ?? '').split(',').some((p) => p.trim() === SUBPROTOCOL)
    ) {
      this.refuse(socket, 400, 'badRequest', req.url ?? '');
      return;
    }
    const mapKey = tokenKey(presented);
    const offer = this.offers.get(mapKey);
    if (!offer || !timingSafeEqual(offer.token, Buffer.from(presented, 'hex'))) {
      this.refuse(socket, 403, 'unknownToken', '');
      return;
    }
    if (req.headers.origin !== offer.origin) {
      // Not consumed: a page of another origin that learnt the token must not lock out the webview.
      this.refuse(socket, 403, 'wrongOrigin', String(req.headers.origin));
      return;
    }
    this.offers.delete(mapKey);
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${acceptKey(key)}\r\nSec-WebSocket-Protocol: ${SUBPROTOCOL}\r\n\r\n`,
    );
    const direct = new DirectSocket(socket);
    offer.accept(direct);
    // Bytes the client sent right behind its request, now that someone listens for messages.
    direct.feed(head);
  }

  private refuse(socket: Socket, status: number, reason: DirectRefusal, detail: string): void {
    this.onRefused(reason, detail);
    socket.end(`HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  }
}

function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
