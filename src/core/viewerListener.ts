import { createServer, type Server, type Socket } from 'node:net';
import { RfbInputGate } from './rfbInputGate';
import type { StreamProcess } from './runner';

export interface ViewerListener {
  readonly port: number;
  /** Connections open right now. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A loopback TCP port for native VNC viewers: every connection gets its own relay to the
 * screen's unix socket, and its input passes the same gate as the webview's (only while this
 * listener's viewer holds control). Binds 127.0.0.1 only.
 */
export function listenForViewers(openRelay: () => StreamProcess, mayInput: () => boolean): Promise<ViewerListener> {
  const open = new Set<{ socket: Socket; relay: StreamProcess }>();
  const server: Server = createServer((socket) => {
    let relay: StreamProcess;
    try {
      relay = openRelay();
    } catch {
      socket.destroy();
      return;
    }
    const entry = { socket, relay };
    open.add(entry);
    const gate = new RfbInputGate(mayInput);
    const finish = () => {
      if (open.delete(entry)) {
        relay.kill();
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
        close: () =>
          new Promise<void>((done) => {
            for (const entry of [...open]) {
              open.delete(entry);
              entry.relay.kill();
              entry.socket.destroy();
            }
            server.close(() => done());
          }),
      });
    });
  });
}
