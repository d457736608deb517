// A tiny RFB server for the recorder's tests: the server's handshake and messages as bytes, and
// FakeRelay, a relay whose far end is that server (an update of a chosen size per request), as
// pipes in the test's process or behind a unix socket (serveFakeRfb) for the real relay.py.
import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';

/** A server's side of the handshake up to ServerInit (w×h, name "x"). */
export function serverHello(w: number, h: number): Buffer {
  const init = Buffer.alloc(24);
  init.writeUInt16BE(w, 0);
  init.writeUInt16BE(h, 2);
  init.writeUInt32BE(1, 20);
  return Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([2, 2, 1]), Buffer.alloc(4), init, Buffer.from('x')]);
}

export function rect(x: number, y: number, w: number, h: number, encoding: number, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(x, 0);
  head.writeUInt16BE(y, 2);
  head.writeUInt16BE(w, 4);
  head.writeUInt16BE(h, 6);
  head.writeInt32BE(encoding, 8);
  return Buffer.concat([head, body]);
}

export function update(...rects: Buffer[]): Buffer {
  const head = Buffer.from([0, 0, 0, 0]);
  head.writeUInt16BE(rects.length, 2);
  return Buffer.concat([head, ...rects]);
}

export function cutText(text: string): Buffer {
  const head = Buffer.alloc(8);
  head[0] = 3;
  head.writeUInt32BE(text.length, 4);
  return Buffer.concat([head, Buffer.from(text, 'latin1')]);
}

/**
 * One relay: a tiny RFB server on PassThrough pipes that answers each update request with
 * `bytesPerUpdate` of ZRLE, sends clipboard text once, and records every client message type.
 * While its screen is `still` (shared by every relay of a test), an incremental request waits
 * for a change, as Xvnc's does.
 */
export class FakeRelay {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly clientTypes: number[] = [];
  readonly requests: boolean[] = [];
  killed = false;
  private resolveExit!: (value: { exitCode: number | null; stderr: string }) => void;
  readonly exited = new Promise<{ exitCode: number | null; stderr: string }>((resolve) => (this.resolveExit = resolve));
  readonly pid = 1;
  private buffered = Buffer.alloc(0);
  private stage = 0;
  private waiting = false;
  private pictureDue = false;
  private held = false;

  constructor(
    private readonly bytesPerUpdate: number,
    private readonly screen: { still?: boolean; layoutFirst?: boolean; holdPicture?: boolean } = {},
  ) {
    this.stdin.on('data', (chunk: Buffer) => this.client(chunk));
    this.stdout.write(Buffer.from('RFB 003.008\n'));
  }

  /** A held picture (`holdPicture`) goes out now. */
  releasePicture(): void {
    if (this.held && !this.killed) {
      this.held = false;
      this.answer();
    }
  }

  /** The screen changed: a waiting incremental request is answered. */
  change(): void {
    if (this.waiting && !this.killed) {
      this.waiting = false;
      this.answer();
    }
  }

  kill(): void {
    this.killed = true;
    this.stdout.end();
    this.resolveExit({ exitCode: null, stderr: '' });
  }

  private client(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const need = this.stage === 0 ? 12 : this.stage < 3 ? 1 : this.messageLength();
      if (need === undefined || this.buffered.length < need) {
        return;
      }
      const message = this.buffered.subarray(0, need);
      this.buffered = this.buffered.subarray(need);
      if (this.stage === 0) {
        this.stdout.write(Buffer.from([1, 1]));
      } else if (this.stage === 1) {
        this.stdout.write(Buffer.alloc(4));
      } else if (this.stage === 2) {
        this.stdout.write(serverHello(64, 48).subarray(12 + 3 + 4));
      } else {
        this.clientTypes.push(message[0]);
        if (message[0] === 3 && !this.killed) {
          this.requests.push(message[1] === 1);
          if (message[1] === 0 && this.screen.layoutFirst) {
            // Xvnc: a full request is answered by an update with only the screen layout; the
            // whole screen stays marked changed and goes with the next request's answer.
            this.stdout.write(update(rect(0, 0, 64, 48, -308, Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.alloc(16)]))));
            this.pictureDue = true;
          } else if (this.pictureDue) {
            this.pictureDue = false;
            if (this.screen.holdPicture) {
              this.held = true;
            } else {
              this.answer();
            }
          } else if (message[1] === 1 && this.screen.still) {
            this.waiting = true;
          } else {
            this.answer();
          }
        }
      }
      this.stage = Math.min(3, this.stage + 1);
    }
  }

  private answer(): void {
    const zrle = Buffer.alloc(4 + this.bytesPerUpdate, 1);
    zrle.writeUInt32BE(this.bytesPerUpdate, 0);
    if (this.requests.length === 2) {
      this.stdout.write(cutText('my password'));
    }
    this.stdout.write(update(rect(0, 0, 64, 48, 16, zrle)));
  }

  private messageLength(): number | undefined {
    if (this.buffered.length === 0) {
      return undefined;
    }
    switch (this.buffered[0]) {
      case 0:
        return 20;
      case 2:
        return this.buffered.length < 4 ? undefined : 4 + 4 * this.buffered.readUInt16BE(2);
      case 3:
        return 10;
      default:
        return 1; // anything else is what the test fails on
    }
  }
}

/**
 * FakeRelay's server behind a unix socket at `path`: every connection gets a server of its own
 * (`bytesPerUpdate` per update); `open()` counts the connections still open.
 */
export async function serveFakeRfb(path: string, bytesPerUpdate: number): Promise<{ open(): number; close(): Promise<void> }> {
  let open = 0;
  const server = createServer((socket) => {
    const relay = new FakeRelay(bytesPerUpdate);
    open++;
    socket.pipe(relay.stdin);
    relay.stdout.pipe(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      open--;
      relay.kill();
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { open: () => open, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
