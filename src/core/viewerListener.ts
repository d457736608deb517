/**
 * The external-viewer port: the screen's RFB on a loopback TCP port for native VNC viewers. Only
 * the user the extension host runs as may connect (see loopbackGuard.ts), at most
 * `MAX_CONNECTIONS` at once, and each connection is its own viewer in the control lease.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { DisposableLike } from './lifecycle';
import { LoopbackGuard, type Refusal } from './loopbackGuard';
import { endRelay } from './relay';
import { RfbInputGate, type ClipboardPolicy } from './rfbInputGate';
import { framedEncoding, RfbProtocolError } from './rfbServerStream';
import type { StreamProcess } from './runner';
import { ServerCutTextFilter } from './serverCutTextFilter';

/** What the listener needs from the control lease, for viewer ids of its own making. */
export interface ViewerControl {
  /** True only while this very viewer holds control. */
  holds(viewerId: string): boolean;
  take(viewerId: string): void;
  /** Hands back if this viewer holds; nothing otherwise. */
  handBack(viewerId: string): void;
}

export interface ViewerListenerOptions {
  readonly openRelay: () => StreamProcess;
  readonly control: ViewerControl;
  /** Prefix of the lease viewer ids of this listener's connections (`<prefix>-<n>`). */
  readonly viewerPrefix: string;
  readonly maxConnections?: number;
  readonly onRefused?: (reason: Refusal, detail: string) => void;
  /** Which ways a connection in control may move clipboard text (the user's setting). Default: both. */
  readonly clipboard?: () => ClipboardPolicy;
  /** Counts a connection as a viewer of the screen until the returned disposable runs. */
  readonly onViewer?: (viewerId: string) => DisposableLike;
  /** A connection was closed because its server-to-client stream could not be followed (see serverCutTextFilter.ts). */
  readonly onStreamError?: (viewerId: string, detail: string) => void;
}

export interface ViewerListener {
  readonly port: number;
  /** Connections served right now (until their relay is gone: each one holds a slot of the cap). */
  connections(): number;
  /**
   * Gives control to the most recently opened connection that is still open (the viewer the
   * person just connected); the others stay view-only. Its viewer id, or undefined when no
   * viewer is connected.
   */
  takeControl(): string | undefined;
  /** Control changed: every connection that no longer holds it lets go of the keys and buttons it held. */
  releaseHeld(): void;
  close(): Promise<void>;
}

interface Connection {
  readonly viewerId: string;
  readonly socket: Socket;
  readonly relay: StreamProcess;
  readonly gate: RfbInputGate;
}

/**
 * Binds 127.0.0.1 only. Every admitted connection gets its own relay to the screen's unix
 * socket, and its input passes the same gate as the webview's, asked per connection: control
 * is granted to a connection, so a second viewer of the same port stays view-only, and the
 * holder's connection closing hands control back (that connection is the holder's view).
 *
 * The screen's clipboard text reaches a connection only while it holds control and the policy
 * lets text come from the screen: the server's stream passes a ServerCutTextFilter on its way.
 *
 * Both directions have backpressure, so memory stays flat whichever side stalls: the relay's
 * stdout is paused while the socket's write buffer is full, and the socket is paused while the
 * relay's stdin does not drain.
 */
export function listenForViewers(options: ViewerListenerOptions): Promise<ViewerListener> {
  const { openRelay, control, viewerPrefix } = options;
  const guard = new LoopbackGuard({ maxConnections: options.maxConnections, onRefused: options.onRefused });
  const open: Connection[] = [];
  let serial = 0;
  let closed = false;

  const serve = (socket: Socket, free: () => void) => {
    if (closed) {
      // Closed while this connection was being checked: no exec for it.
      free();
      socket.destroy();
      return;
    }
    let relay: StreamProcess;
    try {
      relay = openRelay();
    } catch {
      free();
      socket.destroy();
      return;
    }
    const viewerId = `${viewerPrefix}-${++serial}`;
    const filter = new ServerCutTextFilter({
      clientVersion: () => gate.version,
      // The gate's own clipboard rule (control and policy), which its ClientCutText obeys too.
      mayReceive: () => gate.allowsClipboard('fromScreen'),
    });
    const gate = new RfbInputGate(() => control.holds(viewerId), {
      clipboard: options.clipboard,
      keepEncoding: framedEncoding,
      observe: (message) => filter.clientMessage(message),
    });
    const conn: Connection = { viewerId, socket, relay, gate };
    open.push(conn);
    const counted = options.onViewer?.(viewerId);
    void relay.exited.then(free);
    let done = false;
    const finish = () => {
      if (done) {
        return;
      }
      done = true;
      open.splice(open.indexOf(conn), 1);
      counted?.dispose();
      // Keys and buttons this viewer still holds are released before its relay ends.
      endRelay(relay, gate.release().forward);
      socket.destroy();
      control.handBack(conn.viewerId);
    };
    let waitingForDrain = false;
    socket.on('data', (chunk: Buffer) => {
      const { forward, close } = gate.push(chunk);
      for (const bytes of forward) {
        if (!relay.stdin.write(bytes) && !waitingForDrain) {
          waitingForDrain = true;
          socket.pause();
          relay.stdin.once('drain', () => {
            waitingForDrain = false;
            socket.resume();
          });
        }
      }
      if (close) {
        finish();
      }
    });
    let waitingForSocket = false;
    relay.stdout.on('data', (chunk: Buffer) => {
      if (done) {
        return;
      }
      let parts: Uint8Array[];
      try {
        parts = filter.push(chunk);
      } catch (err) {
        options.onStreamError?.(viewerId, err instanceof RfbProtocolError ? err.message : String(err));
        finish();
        return;
      }
      let flowing = true;
      for (const part of parts) {
        if (part.length > 0) {
          flowing = socket.write(part) && flowing;
        }
      }
      if (!flowing && !waitingForSocket) {
        waitingForSocket = true;
        relay.stdout.pause();
        socket.once('drain', () => {
          waitingForSocket = false;
          relay.stdout.resume();
        });
      }
    });
    relay.stdout.once('end', () => socket.end());
    socket.on('error', finish);
    socket.on('close', finish);
    void relay.exited.then(finish);
  };

  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined);
    void guard.admit(socket).then((free) => free && serve(socket, free));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      server.off('error', reject);
      // Accept errors (EMFILE...) only drop that connection.
      server.on('error', () => undefined);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        port,
        connections: () => guard.count,
        releaseHeld: () => {
          for (const { viewerId, relay, gate } of open) {
            if (control.holds(viewerId)) {
              continue; // the holder's keys are the person's own, still pressed
            }
            for (const bytes of gate.release().forward) {
              relay.stdin.write(bytes);
            }
          }
        },
        takeControl: () => {
          const newest = open.at(-1);
          if (newest) {
            control.take(newest.viewerId);
          }
          return newest?.viewerId;
        },
        close: () =>
          new Promise<void>((done) => {
            closed = true;
            for (const conn of [...open]) {
              conn.socket.destroy(); // its 'close' releases what it held, ends the relay and hands back
            }
            server.close(() => done());
          }),
      });
    });
  });
}
