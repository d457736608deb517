// Several RFB connections over one relay exec (relay.py's `mux` mode). The flight recorder opens
// a new connection to the screen for every segment (every 10-30 s under a flood); as a relay exec
// each, that was a process spawn in the extension host and a `docker exec` client's start (tens of
// milliseconds of CPU each, in the flood's profile) every time. Over the mux a segment's
// connection costs one frame on the exec's stdin. What a connection's owner writes goes out at
// once, without backpressure: the recorder writes only its handshake and update requests. Each connection looks like a relay of its own (a StreamProcess), so
// its owner cannot tell the difference; the exec ends when its last connection does.
import { Readable, Writable } from 'node:stream';
import { RELAY_EXIT_UNREACHABLE } from './relay';
import type { StreamProcess } from './runner';

/** Frame ops, both ways (relay.py): op u8, connection id u32, payload length u32, payload. */
export const MUX_OPEN = 1;
export const MUX_DATA = 2;
export const MUX_CLOSE = 3;
/** From the relay: the connection ended; payload: its exit code (u8), then why (UTF-8). */
export const MUX_END = 4;
/** To the relay: nothing more to send on this connection (its socket's write side is shut). */
export const MUX_EOF = 5;
export const MUX_HEADER_BYTES = 9;

export function muxFrameHeader(op: number, id: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(MUX_HEADER_BYTES);
  header.writeUInt8(op, 0);
  header.writeUInt32BE(id, 1);
  header.writeUInt32BE(length, 5);
  return header;
}

type Exit = { exitCode: number | null; stderr: string };

/** One connection over the mux, as a relay process of its own. */
class MuxConnection implements StreamProcess {
  readonly stdout = new Readable({ read: () => undefined });
  readonly stdin: Writable;
  readonly exited: Promise<Exit>;
  private settle!: (exit: Exit) => void;
  /** END's payload, gathered when it spans chunks. */
  endPayload: Buffer[] = [];
  done = false;

  constructor(
    private readonly mux: RelayMux,
    readonly id: number,
    /** The exec that carries it. */
    readonly exec: StreamProcess,
  ) {
    this.exited = new Promise((resolve) => (this.settle = resolve));
    this.stdin = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        mux.send(MUX_DATA, id, chunk);
        callback();
      },
      // As a plain relay's stdin ending: the server is told, and what it still sends comes
      // until it hangs up.
      final: (callback) => {
        mux.send(MUX_EOF, id);
        callback();
      },
    });
    this.stdin.on('error', () => undefined);
  }

  get pid(): number | undefined {
    return this.exec.pid;
  }

  kill(): void {
    this.finish({ exitCode: null, stderr: '' }, true);
  }

  /** The connection is over: its owner sees the stream end, then the exit. */
  finish(exit: Exit, tellRelay: boolean): void {
    if (this.done) {
      return;
    }
    this.done = true;
    this.mux.forget(this, tellRelay);
    this.stdout.push(null);
    this.settle(exit);
  }
}

export class RelayMux {
  private exec: StreamProcess | undefined;
  private readonly connections = new Map<number, MuxConnection>();
  private nextId = 1;
  /** The stdout frame being read: its header's bytes so far, then its connection and what is left of its payload. */
  private header = Buffer.alloc(MUX_HEADER_BYTES);
  private headerFilled = 0;
  private op = 0;
  private target: MuxConnection | undefined;
  private left = 0;

  /**
   * `open` starts the relay exec in mux mode (the command from src/core/screen.ts's
   * `relayCommand({ mux: true })`, run by the recorder's process: ./recorderProcessMain.ts);
   * `unreachable` hears of a connection the relay could not make (the screen's socket is gone
   * or not ours), as the screen hears of a plain relay's exit code 2.
   */
  constructor(
    private readonly open: () => StreamProcess,
    private readonly unreachable: () => void = () => undefined,
  ) {}

  /** A new connection to the screen's socket; throws as `open` does when no exec can start. */
  connect(): StreamProcess {
    const exec = (this.exec ??= this.start());
    const connection = new MuxConnection(this, this.nextId++, exec);
    this.connections.set(connection.id, connection);
    this.send(MUX_OPEN, connection.id);
    return connection;
  }

  /** Ends every connection and the exec. */
  dispose(): void {
    for (const connection of [...this.connections.values()]) {
      connection.kill();
    }
    this.stop();
  }

  send(op: number, id: number, payload?: Uint8Array): void {
    const exec = this.exec;
    if (!exec || !this.connections.has(id)) {
      return;
    }
    exec.stdin.write(muxFrameHeader(op, id, payload?.length ?? 0));
    if (payload?.length) {
      exec.stdin.write(payload);
    }
  }

  forget(connection: MuxConnection, tellRelay: boolean): void {
    if (tellRelay) {
      this.send(MUX_CLOSE, connection.id);
    }
    this.connections.delete(connection.id);
    if (this.target === connection && this.op === MUX_DATA) {
      this.target = undefined; // the rest of its frame is skipped
    }
    if (this.connections.size === 0) {
      this.stop(); // nothing left running between a failed segment and its retry
    }
  }

  private start(): StreamProcess {
    const exec = this.open();
    exec.stdout.on('data', (chunk: Buffer) => this.receive(exec, chunk));
    void exec.exited.then(({ exitCode, stderr }) => {
      if (this.exec === exec) {
        this.exec = undefined;
        this.resetReader();
      }
      // Every connection it carried ends as its own relay would have: with the exec's code.
      for (const connection of [...this.connections.values()]) {
        if (connection.exec === exec) {
          connection.finish({ exitCode, stderr }, false);
        }
      }
    });
    return exec;
  }

  private stop(): void {
    const exec = this.exec;
    this.exec = undefined;
    this.resetReader();
    exec?.kill();
  }

  private resetReader(): void {
    this.headerFilled = 0;
    this.target = undefined;
    this.left = 0;
  }

  /** Splits the exec's stdout into its frames; a connection's bytes are handed on without a copy. */
  private receive(exec: StreamProcess, chunk: Buffer): void {
    if (exec !== this.exec) {
      return;
    }
    let at = 0;
    while (at < chunk.length) {
      if (this.headerFilled < MUX_HEADER_BYTES) {
        const n = Math.min(MUX_HEADER_BYTES - this.headerFilled, chunk.length - at);
        chunk.copy(this.header, this.headerFilled, at, at + n);
        this.headerFilled += n;
        at += n;
        if (this.headerFilled < MUX_HEADER_BYTES) {
          return;
        }
        this.op = this.header.readUInt8(0);
        this.target = this.connections.get(this.header.readUInt32BE(1));
        this.left = this.header.readUInt32BE(5);
        if (this.left > 0) {
          continue;
        }
      } else {
        const n = Math.min(this.left, chunk.length - at);
        const piece = chunk.subarray(at, at + n);
        at += n;
        this.left -= n;
        if (this.op === MUX_DATA) {
          this.target?.stdout.push(piece);
        } else if (this.op === MUX_END) {
          this.target?.endPayload.push(piece);
        }
        if (this.left > 0) {
          continue;
        }
      }
      this.frameEnd();
    }
  }

  private frameEnd(): void {
    const target = this.target;
    this.headerFilled = 0;
    this.target = undefined;
    if (this.op === MUX_END && target) {
      const payload = Buffer.concat(target.endPayload);
      const exitCode = payload.length > 0 ? payload[0] : 0;
      target.finish({ exitCode, stderr: payload.subarray(1).toString('utf8') }, false);
      if (exitCode === RELAY_EXIT_UNREACHABLE) {
        this.unreachable();
      }
    }
  }
}
