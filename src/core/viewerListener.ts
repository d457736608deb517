import { createServer, type Server, type Socket } from 'node:net';
import { endRelay } from './relay';
import { RfbInputGate } from './rfbInputGate';
import type { StreamProcess } from './runner';

export interface ViewerListener {
  readonly port: number;
  /** Connections open right now. */
  connections(): number;
  /** Control ended for this listener's viewer: every connection lets go of the keys and buttons it held. */
  releaseHeld(): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP port for native VNC viewers: every connection gets its own relay to the
 * screen's unix socket, and its input passes the same gate as the webview's (only while this
 * listener's viewer holds control). Binds 127.0.0.1 only.
 */
export function listenForViewers(openRelay: () => StreamProcess, mayInput: () => boolean): Promise<ViewerListener> {
  const open = new Set<{ socket: Socket; relay: StreamProcess; gate: RfbInputGate }>();
  const server: Server = createServer((socket) => {
    let relay: StreamProcess;
    try {
      relay = openRelay();
    } catch {
      socket.destroy();
      return;
    }
    const gate = new RfbInputGate(mayInput);
    const entry = { socket, relay, gate };
    open.add(entry);
    const finish = () => {
      if (open.delete(entry)) {
        endRelay(relay, gate.release().forward);
        socket.destroy();
      }
    };
    socket.on('data', (chunk: Buffer) => {
      const { forward, close } = gate.push(chunk);
      for (const bytes of forward) {
        relay.stdin.write(bytes);
      }
      if (close) {
        finish();
      }
    });
    relay.stdout.pipe(socket);
    socket.on('error', finish);
    socket.on('close', finish);
    void relay.exited.then(finish);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        port,
        connections: () => open.size,
        releaseHeld: () => {
          for (const { relay, gate } of open) {
            for (const bytes of gate.release().forward) {
              relay.stdin.write(bytes);
            }
          }
        },
        close: () =>
          new Promise<void>((done) => {
            for (const entry of [...open]) {
              open.delete(entry);
              endRelay(entry.relay, entry.gate.release().forward);
              entry.socket.destroy();
            }
            server.close(() => done());
          }),
      });
    });
  });
}
