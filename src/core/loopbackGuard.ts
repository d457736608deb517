/**
 * Who may use our loopback TCP listeners (the external-viewer port, the DevTools forward): only
 * the Unix user the extension host runs as, and only up to `MAX_CONNECTIONS` at a time.
 *
 * Why a uid check: a port on 127.0.0.1 is open to every local user of the machine (a shared dev
 * box, an SSH host under `gateway`). Native VNC viewers and DevTools clients (Playwright, curl,
 * Chrome) cannot be made to present a secret we choose, and unix sockets are not something they
 * all dial. What every one of them does is connect from a socket owned by its own user, and on
 * Linux the kernel publishes that owner: `/proc/net/tcp` and `/proc/net/tcp6` list every TCP
 * socket of our network namespace with its local and remote address and the uid that created it.
 * The client's socket is the one whose local end is our accepted socket's remote end and whose
 * remote end is our local end; its uid column must equal ours. The check runs when the
 * connection is accepted, before a byte is sent to it or any exec is spawned for it; anything we
 * cannot prove (no such line, two candidates, a file we cannot read) is refused.
 *
 * Other systems (macOS, Windows) have no such table readable without privileges, so there the
 * check refuses every connection (`supported()` is false and the commands say so up front):
 * refusing is safe, letting another user watch or type is not.
 */
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { Socket } from 'node:net';
import type { Logger } from './logger';

/** At most this many connections per listener are served at once; more are refused. */
export const MAX_CONNECTIONS = 8;

/** Why a connection was refused. */
export type Refusal = 'otherUser' | 'unverified' | 'unsupported' | 'busy';

export interface GuardOptions {
  readonly maxConnections?: number;
  /** Told of every refused connection (for the log); never throws into the listener. */
  readonly onRefused?: (reason: Refusal, detail: string) => void;
}

/** TIME_WAIT lines carry no owner (uid 0): they never prove anything. */
const TCP_TIME_WAIT = '06';

/** Whether this system lets us tell who is on the other end of a loopback connection. */
export function supported(): boolean {
  return process.platform === 'linux' && typeof process.getuid === 'function';
}

/** One line of /proc/net/tcp{,6}: local and remote "address:port" keys, state, owner uid. */
interface TcpEntry {
  readonly local: string;
  readonly remote: string;
  readonly state: string;
  readonly uid: number;
}

/**
 * The kernel prints each 32-bit word of an address in host byte order: "0100007F" is 127.0.0.1
 * on a little-endian machine. IPv4-mapped IPv6 addresses (an AF_INET6 client socket connecting to
 * 127.0.0.1) become dotted IPv4 so they compare with what Node reports for our IPv4 listener.
 */
function decodeAddress(hex: string): string {
  const bytes = Buffer.from(hex, 'hex');
  if (endianness() === 'LE') {
    for (let i = 0; i + 4 <= bytes.length; i += 4) {
      bytes.subarray(i, i + 4).reverse();
    }
  }
  if (bytes.length === 4) {
    return bytes.join('.');
  }
  const mapped = bytes.length === 16 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.subarray(12).join('.') : `[${bytes.toString('hex')}]`;
}

function decodeEndpoint(field: string): string {
  const [address, port] = field.split(':');
  return `${decodeAddress(address)}:${parseInt(port, 16)}`;
}

function parseTable(text: string): TcpEntry[] {
  const entries: TcpEntry[] = [];
  for (const line of text.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10 || !/^\d+$/.test(fields[7])) {
      continue;
    }
    entries.push({ local: decodeEndpoint(fields[1]), remote: decodeEndpoint(fields[2]), state: fields[3], uid: Number(fields[7]) });
  }
  return entries;
}

async function readTable(file: string): Promise<TcpEntry[]> {
  try {
    return parseTable(await readFile(file, 'latin1'));
  } catch {
    return []; // no IPv6 in this kernel: nothing to match there
  }
}

/** Node reports our IPv4 listener's peers plainly, a dual-stack one's as ::ffff:a.b.c.d. */
function nodeEndpoint(address: string | undefined, port: number | undefined): string | undefined {
  if (address === undefined || port === undefined) {
    return undefined;
  }
  return `${address.replace(/^::ffff:/i, '')}:${port}`;
}

/**
 * The uid owning the client end of an accepted loopback connection, or undefined when the
 * kernel's tables do not name exactly one such socket.
 */
export async function loopbackPeerUid(socket: Socket): Promise<number | undefined> {
  const peer = nodeEndpoint(socket.remoteAddress, socket.remotePort);
  const ours = nodeEndpoint(socket.localAddress, socket.localPort);
  if (!peer || !ours) {
    return undefined;
  }
  const tables = await Promise.all([readTable('/proc/net/tcp'), readTable('/proc/net/tcp6')]);
  const matches = tables.flat().filter((e) => e.state !== TCP_TIME_WAIT && e.local === peer && e.remote === ours);
  return matches.length === 1 ? matches[0].uid : undefined;
}

/**
 * Admission for one listener: a slot per served connection (held until its relay is gone, so the
 * cap bounds execs, not just sockets) and the owner check. A refused socket is reset at once.
 */
export class LoopbackGuard {
  private held = 0;
  private readonly max: number;

  constructor(private readonly options: GuardOptions = {}) {
    this.max = options.maxConnections ?? MAX_CONNECTIONS;
  }

  /** Slots taken right now (connections served or being checked). */
  get count(): number {
    return this.held;
  }

  /**
   * Resolves with the function that frees the connection's slot (call it once its relay is
   * gone; calling again does nothing), or undefined after the socket was refused and destroyed.
   */
  async admit(socket: Socket): Promise<(() => void) | undefined> {
    // The slot is taken before the check, so a burst cannot pass the cap while lookups run.
    if (this.held >= this.max) {
      this.refuse(socket, 'busy', `${this.max} connections are open already`);
      return undefined;
    }
    this.held++;
    let freed = false;
    const free = () => {
      if (!freed) {
        freed = true;
        this.held--;
      }
    };
    const verdict = await this.check(socket);
    if (verdict) {
      free();
      this.refuse(socket, verdict.reason, verdict.detail);
      return undefined;
    }
    if (socket.destroyed) {
      free(); // the client left while we looked it up
      return undefined;
    }
    return free;
  }

  private async check(socket: Socket): Promise<{ reason: Refusal; detail: string } | undefined> {
    if (!supported()) {
      return { reason: 'unsupported', detail: `cannot tell which user connects on ${process.platform}` };
    }
    const owner = process.getuid!();
    const uid = await loopbackPeerUid(socket);
    if (uid === undefined) {
      return { reason: 'unverified', detail: `no single socket for ${socket.remoteAddress}:${socket.remotePort} in /proc/net/tcp` };
    }
    if (uid !== owner) {
      return { reason: 'otherUser', detail: `uid ${uid} connected from port ${socket.remotePort}; only uid ${owner} may` };
    }
    return undefined;
  }

  private refuse(socket: Socket, reason: Refusal, detail: string): void {
    socket.on('error', () => undefined);
    // A reset, not a FIN: the client learns at once that nothing will come.
    socket.resetAndDestroy();
    try {
      this.options.onRefused?.(reason, detail);
    } catch {
      // logging must not break the listener
    }
  }
}

/** How often refusals of one kind are logged at most (a flood must not flood the log). */
const REFUSAL_LOG_MS = 10_000;

/**
 * An `onRefused` that logs the first refusal of each kind at once and later ones at most every
 * 10 s, with how many were refused meanwhile.
 */
export function refusalLog(log: Logger, what: string): (reason: Refusal, detail: string) => void {
  const last = new Map<Refusal, { at: number; quiet: number }>();
  return (reason, detail) => {
    const now = Date.now();
    const seen = last.get(reason);
    if (seen && now - seen.at < REFUSAL_LOG_MS) {
      seen.quiet++;
      return;
    }
    const more = seen && seen.quiet > 0 ? ` (and ${seen.quiet} more refused since)` : '';
    last.set(reason, { at: now, quiet: 0 });
    log.warn(`${what}: refused a connection (${reason}): ${detail}${more}`);
  };
}
