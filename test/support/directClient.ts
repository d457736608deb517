// A raw TCP client of the direct channel (src/core/directChannel.ts) that writes RFC 6455 frames
// by hand, as a browser would: the upgrade request with its origin and subprotocol, masked
// frames, and the server's frames parsed back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { acceptKey, frameHeader } from '../../src/core/directChannel';

/** The origin the tests' webview has. */
export const ORIGIN = 'vscode-webview://abc123';

/** A client frame: masked with a random key, as a browser sends it. */
export function clientFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i & 3]));
  const header = frameHeader(opcode, payload.length);
  if (!fin) {
    header[0] &= 0x7f;
  }
  header[1] |= 0x80;
  return Buffer.concat([header, mask, masked]);
}

/** The server frame (unmasked) at `at` in `data` and where the next begins; undefined while it is not whole. */
export function nextServerFrame(data: Buffer, at = 0): { opcode: number; payload: Buffer; end: number } | undefined {
  if (data.length < at + 2) {
    return undefined;
  }
  let length = data[at + 1] & 0x7f;
  let offset = at + 2;
  if (length === 126) {
    if (data.length < at + 4) return undefined;
    length = data.readUInt16BE(at + 2);
    offset += 2;
  } else if (length === 127) {
    if (data.length < at + 10) return undefined;
    length = Number(data.readBigUInt64BE(at + 2));
    offset += 8;
  }
  if (data.length < offset + length) {
    return undefined;
  }
  return { opcode: data[at] & 0x0f, payload: data.subarray(offset, offset + length), end: offset + length };
}

/** Server frames (unmasked) parsed from what the client received. */
export function serverFrames(data: Buffer): { opcode: number; payload: Buffer }[] {
  const frames = [];
  for (let frame = nextServerFrame(data); frame; frame = nextServerFrame(data, frame.end)) {
    frames.push({ opcode: frame.opcode, payload: frame.payload });
  }
  return frames;
}

export interface Client {
  socket: Socket;
  /** The HTTP status line and headers the server answered. */
  response: Promise<string>;
  /** Everything received after the response head. */
  received(): Buffer;
  closed: Promise<void>;
}

export function dial(port: number, path: string, headers: Record<string, string> = {}): Client {
  const socket = connect(port, '127.0.0.1');
  const key = randomBytes(16).toString('base64');
  const all = { origin: ORIGIN, 'sec-websocket-protocol': 'chat, botscreen.rfb', ...headers };
  const lines = [
    `GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
    `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Extensions: permessage-deflate',
    ...Object.entries(all).filter(([, v]) => v !== '').map(([k, v]) => `${k}: ${v}`),
  ];
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  let data = Buffer.alloc(0);
  let resolveHead: (head: string) => void;
  const response = new Promise<string>((resolve) => (resolveHead = resolve));
  let headEnd = -1;
  socket.on('data', (chunk) => {
    data = Buffer.concat([data, chunk]);
    if (headEnd < 0 && (headEnd = data.indexOf('\r\n\r\n')) >= 0) {
      const head = data.subarray(0, headEnd).toString();
      if (head.startsWith('HTTP/1.1 101')) {
        assert.match(head, new RegExp(`Sec-WebSocket-Accept: ${acceptKey(key).replace(/[+/]/g, '\\$&')}`));
        assert.doesNotMatch(head, /Sec-WebSocket-Extensions/i, 'no extension is negotiated (no deflate)');
        assert.match(head, /\r\nSec-WebSocket-Protocol: botscreen\.rfb(\r|$)/, 'the server names our subprotocol');
      }
      resolveHead(head);
    }
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  closed.then(() => resolveHead?.(''));
  return { socket, response, received: () => (headEnd < 0 ? Buffer.alloc(0) : data.subarray(headEnd + 4)), closed };
}
