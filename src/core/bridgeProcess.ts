// The direct channel's bridge in a process of its own: the extension host forks
// ./bridgeProcessMain.ts (dist/bridge.js) once per window, at the first viewer that dials
// directly, and talks to it over Node's IPC channel. The bridge runs the loopback WebSocket
// server (./directChannel.ts) and each direct viewer's relay exec with its socket pump, so the
// screen's bytes (megabytes a second in a flood) go from the relay to the webview without passing
// the extension host, which every extension shares. What the webview sends comes back here first:
// the input gate (./rfbInputGate.ts), the lease and the clipboard stay in the extension host, and
// only what the gate lets through goes to the relay. It ends when disposed, and on its own when
// the extension host goes (its IPC channel closes), ending its relays with it.
import type { ChildProcess } from 'node:child_process';
import type { Command } from './command';
import { newToken } from './directChannel';
import { type HiddenReadTimes, isResumeRequest } from './hiddenRead';
import type { Logger } from './logger';
import { forkNode, killAfter, stderrTail, tellChild } from './nodeProcess';
import type { ViewerStream } from './viewerStream';

/** What the bridge is told. Sessions are numbered by the extension host. */
export type ToBridge =
  | { readonly t: 'listen' }
  /** A relay exec for a viewer, read while `visible` (./hiddenRead.ts with these times). */
  | { readonly t: 'open'; readonly id: number; readonly command: Command; readonly visible: boolean; readonly quietMs: number; readonly maxMs: number }
  /** The webview of `origin` may dial the session once with `token`. */
  | { readonly t: 'offer'; readonly id: number; readonly origin: string; readonly token: string }
  /** Bytes the input gate let through, for the relay's stdin. */
  | { readonly t: 'write'; readonly id: number; readonly data: Uint8Array }
  /** A client message asked the server to send now (./hiddenRead.ts `isResumeRequest`). */
  | { readonly t: 'resume'; readonly id: number }
  /** VS Code's visibility of the viewer changed (the `seq`-th change), told on its socket too. */
  | { readonly t: 'visible'; readonly id: number; readonly visible: boolean; readonly seq: number }
  /** The session ends: `last` written before the relay's stdin closes (./relay.ts `endRelay`). */
  | { readonly t: 'close'; readonly id: number; readonly last: readonly Uint8Array[] }
  | { readonly t: 'dispose' };

/** What it tells back. */
export type FromBridge =
  | { readonly t: 'log'; readonly level: keyof Logger; readonly message: string }
  | { readonly t: 'listening'; readonly port: number }
  | { readonly t: 'listenFailed'; readonly message: string }
  /** A message the webview sent on its socket (input for the gate). */
  | { readonly t: 'input'; readonly id: number; readonly data: Uint8Array }
  /** The webview's socket closed. */
  | { readonly t: 'socketClosed'; readonly id: number }
  /** The relay's screen sent bytes (at most once every few seconds: the screen's idle timer). */
  | { readonly t: 'activity'; readonly id: number }
  /** The relay exec ended; `endedByOwner` when the bridge killed it or closed its stdin. */
  | { readonly t: 'exited'; readonly id: number; readonly exitCode: number | null; readonly endedByOwner: boolean };

/** How a bridged session reports to its viewer. */
export interface BridgeSessionEvents {
  /** The relay ended (the screen decides whether that says something about the sandbox). */
  exited(exitCode: number | null, endedByOwner: boolean): void;
  /** The screen sent bytes: it is in use. */
  activity(): void;
}

/**
 * V8's young generation capped at its starting size (1 MiB a half). Every webview message crosses
 * the IPC channel twice (in as 'input', back as 'write'), and under that stream V8 grew the young
 * generation step by step to 16 MiB a half: the bridge's RSS 80 -> 151 MiB in 4 minutes at 470
 * messages a second, +0.8 MiB a minute in a 45-minute soak at noVNC's rate. Capped: 64.8-68.5 MiB
 * at 470 a second, +0.05 MiB a minute in the hour's soak (docs/soak/bridge-memory.md); scavenges
 * are more frequent, and cheap, since almost nothing the bridge allocates outlives a message.
 */
const BRIDGE_V8_FLAGS = ['--max-semi-space-size=1'];

/** How long a disposed bridge may take to end its relays before it is killed. */
const DISPOSE_GRACE_MS = 3000;
/** How long the bridge may take to start and listen; else the viewers post. */
const LISTEN_TIMEOUT_MS = 5000;

/** One viewer's session in the bridge: the extension host's handle on its relay and socket. */
export class BridgeSession implements ViewerStream {
  /** A message from the webview's socket, for the input gate. */
  onInput: (data: Uint8Array) => void = () => undefined;
  /** The webview's socket closed. */
  onSocketClosed: () => void = () => undefined;
  /** Resolves when the relay has ended (or the bridge went). */
  readonly exited: Promise<void>;
  private settle!: () => void;
  private ended = false;

  constructor(
    private readonly bridge: BridgeProcess,
    readonly id: number,
    readonly events: BridgeSessionEvents,
  ) {
    this.exited = new Promise((resolve) => (this.settle = resolve));
  }

  /** A one-time token the webview of `origin` dials this session with. */
  offer(origin: string): string {
    const token = newToken();
    this.bridge.send({ t: 'offer', id: this.id, origin, token });
    return token;
  }

  write(data: Uint8Array): void {
    this.bridge.send({ t: 'write', id: this.id, data });
  }

  /** A client message that passed the gate: one that asks the server to send reads a hidden relay again. */
  observe(message: Uint8Array): void {
    if (isResumeRequest(message)) {
      this.bridge.send({ t: 'resume', id: this.id });
    }
  }

  setVisible(visible: boolean, seq: number): void {
    this.bridge.send({ t: 'visible', id: this.id, visible, seq });
  }

  end(last: readonly Uint8Array[]): void {
    this.bridge.send({ t: 'close', id: this.id, last });
  }

  /** The relay ended: said once. */
  finish(exitCode: number | null, endedByOwner: boolean): void {
    if (!this.ended) {
      this.ended = true;
      this.events.exited(exitCode, endedByOwner);
      this.settle();
    }
  }
}

/** The bridge process of this extension host. */
export class BridgeProcess {
  private readonly child: ChildProcess;
  private readonly sessions = new Map<number, BridgeSession>();
  private nextId = 1;
  private disposed = false;
  private gone = false;
  private readonly stderr: () => string;
  private listening: Promise<number> | undefined;
  private heardPort: ((port: number) => void) | undefined;
  private heardFailure: ((err: Error) => void) | undefined;

  constructor(
    script: string,
    private readonly log: Logger,
    /** The process ended without being disposed: its sessions have ended with it. */
    private readonly lost: () => void = () => undefined,
  ) {
    this.child = forkNode(script, 'advanced', BRIDGE_V8_FLAGS);
    this.stderr = stderrTail(this.child);
    this.child.on('message', (message: FromBridge) => this.heard(message));
    this.child.on('error', (err) => {
      log.warn(`bridge process: ${err.message}`);
      // One that could not start (EAGAIN, EMFILE…) may never say so otherwise.
      if (this.child.pid === undefined) {
        this.closed(null, null);
      }
    });
    this.child.once('close', (code, signal) => this.closed(code, signal));
  }

  /** False once the process has ended: a new session goes the postMessage way. */
  get alive(): boolean {
    return !this.gone && !this.disposed;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts the loopback server (once); resolves with its port. */
  listen(): Promise<number> {
    this.listening ??= new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the bridge process did not listen within ${LISTEN_TIMEOUT_MS} ms`)), LISTEN_TIMEOUT_MS);
      this.heardPort = (port) => {
        clearTimeout(timer);
        resolve(port);
      };
      this.heardFailure = (err) => {
        clearTimeout(timer);
        reject(err);
      };
      this.send({ t: 'listen' });
    });
    return this.listening;
  }

  /** Starts a relay exec running `command` in the bridge. */
  open(command: Command, visible: boolean, times: HiddenReadTimes, events: BridgeSessionEvents): BridgeSession {
    const session = new BridgeSession(this, this.nextId++, events);
    this.sessions.set(session.id, session);
    this.send({ t: 'open', id: session.id, command, visible, ...times });
    if (!this.alive) {
      this.sessions.delete(session.id);
      session.finish(null, true);
    }
    return session;
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    this.send({ t: 'dispose' });
    killAfter(this.child, DISPOSE_GRACE_MS);
  }

  send(message: ToBridge): void {
    tellChild(this.child, message);
  }

  private heard(message: FromBridge): void {
    switch (message.t) {
      case 'log':
        this.log[message.level](message.message);
        return;
      case 'listening':
        this.heardPort?.(message.port);
        return;
      case 'listenFailed':
        this.heardFailure?.(new Error(message.message));
        return;
    }
    const session = this.sessions.get(message.id);
    if (!session) {
      return;
    }
    switch (message.t) {
      case 'input':
        session.onInput(message.data);
        break;
      case 'socketClosed':
        session.onSocketClosed();
        break;
      case 'activity':
        session.events.activity();
        break;
      case 'exited':
        this.sessions.delete(message.id);
        session.finish(message.exitCode, message.endedByOwner);
        break;
    }
  }

  private closed(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.gone) {
      return;
    }
    this.gone = true;
    this.heardFailure?.(new Error(`the bridge process ended (${signal ?? `code ${code}`})`));
    if (!this.disposed) {
      this.log.error(`the direct channel's bridge process ended (${signal ?? `code ${code}`})${this.stderr() ? `: ${this.stderr().trim()}` : ''}`);
      this.lost();
    }
    // Its relays went with it (their stdin closed): nothing about the sandbox.
    for (const session of this.sessions.values()) {
      session.finish(null, true);
    }
    this.sessions.clear();
  }
}
