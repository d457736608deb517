/**
 * TCP port forwarding through the exec stream: a listener on 127.0.0.1 whose every accepted
 * connection gets its own exec stream running the relay in `tcp HOST PORT` mode inside the
 * sandbox. It works on every backend that can exec (docker, podman, ssh, apptainer, kubernetes)
 * without published ports or backend-specific tunnels. Used for Chromium's DevTools endpoint.
 *
 * Only the user the extension host runs as may connect, at most `MAX_CONNECTIONS` at once, each
 * checked before its exec is spawned (see loopbackGuard.ts): DevTools is full control of the
 * sandbox browser, and every connection costs an exec.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { DisposableLike } from './lifecycle';
import { LoopbackGuard, type Refusal } from './loopbackGuard';
import { ScreenError } from './problem';
import { RELAY_SOURCE } from './relay';
import { openStream, run, type StreamProcess } from './runner';
import type { Sandbox } from './sandbox';
import { isValidHost } from './validate';

/** How long a relay may take to finish by itself after the local side closed. */
const RELAY_GRACE_MS = 2_000;
/** How long a relay may take to start (and report its pid) before it is killed anyway. */
const RELAY_START_MS = 10_000;

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

/**
 * The relay runs under `sh`, which prints its pid on the first stdout line and then execs the
 * relay (same pid): when the local side is gone but the remote server keeps the connection,
 * that pid is killed inside the sandbox, because killing the local exec client does not stop
 * a `docker exec` process.
 */
const PID_THEN_RELAY = 'echo "$$" && exec python3 -c "$0" "$@"';

export interface ForwardInfo {
  readonly sandboxId: string;
  readonly remoteHost: string;
  readonly remotePort: number;
  readonly localPort: number;
  /** Connections served or being admitted right now (each holds a slot until its relay is gone). */
  readonly connections: number;
}

interface Connection {
  readonly socket: Socket;
  readonly relay: StreamProcess;
  /** The relay's pid inside the sandbox: its first line; undefined if it exited before sending it. */
  readonly remotePid: Promise<string | undefined>;
  exited: boolean;
}

class Forward {
  readonly connections = new Set<Connection>();
  private closed = false;

  constructor(
    readonly sandbox: Sandbox,
    readonly remoteHost: string,
    readonly remotePort: number,
    readonly server: Server,
    readonly localPort: number,
    readonly guard: LoopbackGuard,
  ) {
    server.on('connection', (socket) => {
      socket.on('error', () => undefined);
      void guard.admit(socket).then((free) => free && this.accept(socket, free));
    });
  }

  /** Serves an admitted connection; `free` gives its slot back once its relay is gone. */
  private accept(socket: Socket, free: () => void): void {
    if (this.closed) {
      // Closed while this connection was being checked: no exec for it.
      free();
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const argv = ['sh', '-c', PID_THEN_RELAY, RELAY_SOURCE, 'tcp', this.remoteHost, String(this.remotePort)];
    const relay = openStream(this.sandbox.exec(argv, { interactive: true }));
    let gotPid: (pid: string | undefined) => void = () => undefined;
    const conn: Connection = { socket, relay, exited: false, remotePid: new Promise((resolve) => (gotPid = resolve)) };
    this.connections.add(conn);

    // Remote → local: the pid line first, then bytes as they come, with backpressure.
    let header: Buffer | undefined = Buffer.alloc(0);
    relay.stdout.on('data', (chunk: Buffer) => {
      if (header !== undefined) {
        header = Buffer.concat([header, chunk]);
        const newline = header.indexOf(10);
        if (newline < 0) {
          return;
        }
        gotPid(header.subarray(0, newline).toString('latin1').trim());
        chunk = header.subarray(newline + 1);
        header = undefined;
        if (chunk.length === 0) {
          return;
        }
      }
      if (!socket.destroyed && !socket.write(chunk) && !socket.destroyed) {
        relay.stdout.pause();
        socket.once('drain', () => relay.stdout.resume());
      }
    });
    // The remote side's EOF ends our write side only; the client may still be sending.
    relay.stdout.on('end', () => {
      if (!socket.destroyed) {
        socket.end();
      }
    });

    // Local → remote, with backpressure. The client's FIN becomes the relay's stdin EOF, which
    // the relay turns into shutdown(SHUT_WR) on its socket: half-close reaches the server.
    socket.pipe(relay.stdin);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      // Nobody reads the relay any more: drain it, or its client could never finish (and Docker
      // holds other execs of the container while an exited exec's output sits undrained).
      relay.stdout.resume();
      void this.settle(conn);
    });

    void relay.exited.then(() => {
      free();
      conn.exited = true;
      gotPid(undefined);
      this.connections.delete(conn);
      // The relay is gone: flush what it wrote, close, and cut off a peer that never reads.
      if (!socket.destroyed) {
        socket.end();
        setTimeout(() => socket.destroy(), RELAY_GRACE_MS).unref();
      }
    });
  }

  /** The local side is closed: the relay gets EOF and a moment to finish, then is killed. */
  private async settle(conn: Connection): Promise<void> {
    if (conn.exited) {
      return;
    }
    conn.relay.stdin.end();
    const finished = await Promise.race([conn.relay.exited.then(() => true), delay(RELAY_GRACE_MS).then(() => false)]);
    if (!finished) {
      await this.kill(conn);
    }
  }

  /** Stops a relay inside the sandbox (by its pid) and its local client. */
  async kill(conn: Connection): Promise<void> {
    conn.socket.destroy();
    // A relay still starting is waited for: killing only its local client would leave it running.
    const pid = await Promise.race([conn.remotePid, delay(RELAY_START_MS)]);
    if (!conn.exited && pid && /^\d+$/.test(pid)) {
      // While the local client runs, the remote process it started is alive, so the pid is its.
      await run(this.sandbox.exec(['kill', '-KILL', pid], { interactive: false }), { timeoutMs: 5_000 });
    }
    if (!conn.exited) {
      conn.relay.kill();
    }
    await conn.relay.exited;
  }

  /** Stops accepting; resolves once the open connections are gone too (the caller kills them). */
  close(): Promise<void> {
    this.closed = true;
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface ForwardOptions {
  /** Defaults to `MAX_CONNECTIONS`. Applies when the listener is created. */
  readonly maxConnections?: number;
  /** Told of every refused connection (another user, over the cap, unverifiable). */
  readonly onRefused?: (reason: Refusal, detail: string) => void;
}

function forwardKey(sandbox: Sandbox, host: string, port: number): string {
  return JSON.stringify([sandbox.backend, sandbox.id, host, port]);
}

/**
 * The forwards of one owner (the extension's context, a test): one listener per sandbox
 * identity, host and port, all closed when the owner disposes it, so no listener outlives the
 * window that opened it.
 */
export class PortForwarder implements DisposableLike {
  private readonly forwards = new Map<string, Promise<Forward>>();

  /**
   * A local `127.0.0.1` port that reaches `remoteHost:remotePort` inside the sandbox. Calling
   * again for the same sandbox, host and port returns the same port.
   */
  async forward(sandbox: Sandbox, remotePort: number, remoteHost = '127.0.0.1', options: ForwardOptions = {}): Promise<number> {
    if (!Number.isInteger(remotePort) || remotePort < 1 || remotePort > 65535) {
      throw new ScreenError({ code: 'badPort', port: String(remotePort) });
    }
    if (!isValidHost(remoteHost)) {
      throw new ScreenError({ code: 'badHost', host: remoteHost });
    }
    const key = forwardKey(sandbox, remoteHost, remotePort);
    let pending = this.forwards.get(key);
    if (!pending) {
      pending = listen(sandbox, remoteHost, remotePort, new LoopbackGuard({ maxConnections: options.maxConnections, onRefused: options.onRefused }));
      this.forwards.set(key, pending);
      pending.catch(() => this.forwards.delete(key));
    }
    return (await pending).localPort;
  }

  /** The open forwards (for status surfaces and tests). */
  async list(): Promise<ForwardInfo[]> {
    const all = await Promise.all([...this.forwards.values()].map((p) => p.catch(() => undefined)));
    return all
      .filter((f): f is Forward => f !== undefined)
      .map((f) => ({
        sandboxId: f.sandbox.id,
        remoteHost: f.remoteHost,
        remotePort: f.remotePort,
        localPort: f.localPort,
        connections: f.guard.count,
      }));
  }

  /**
   * Closes the listeners of one sandbox (all when no id is given) and stops their relays, here
   * and inside the sandbox. Called when the screen stops and when the owner is disposed.
   */
  async close(sandboxId?: string): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, pending] of [...this.forwards]) {
      const forward = await pending.catch(() => undefined);
      if (forward && sandboxId !== undefined && forward.sandbox.id !== sandboxId) {
        continue;
      }
      this.forwards.delete(key);
      if (forward) {
        closing.push(forward.close(), ...[...forward.connections].map((conn) => forward.kill(conn)));
      }
    }
    await Promise.all(closing);
  }

  dispose(): void {
    void this.close();
  }
}

function listen(sandbox: Sandbox, remoteHost: string, remotePort: number, guard: LoopbackGuard): Promise<Forward> {
  return new Promise((resolve, reject) => {
    const server = createServer({ allowHalfOpen: true });
    server.once('error', reject);
    // Loopback only, always: the sandbox's ports must not become this machine's LAN ports.
    server.listen({ host: '127.0.0.1', port: 0, backlog: 64 }, () => {
      server.off('error', reject);
      // Accept errors (EMFILE...) only drop that connection.
      server.on('error', () => undefined);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve(new Forward(sandbox, remoteHost, remotePort, server, port, guard));
    });
  });
}
