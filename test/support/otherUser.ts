// A real second Unix user on this machine, made by the test with useradd and removed after it:
// the "other local user" of the threat model, whose programs run through setpriv.
import { randomBytes } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { run, type RunResult } from '../../src/core/runner';

export interface OtherUser {
  readonly name: string;
  readonly uid: number;
  /** Runs argv as that user only (its uid, its gid, no supplementary groups). */
  run(argv: string[], timeoutMs?: number): Promise<RunResult>;
  remove(): void;
}

/**
 * A loopback TCP client for the other user (Debian's python3, which every user may run):
 * `FAMILY(4|6) PORT WAIT [PAYLOAD [WANT]]`. It connects, optionally sends bytes, and prints how
 * many bytes it received until the server closed, reset, went quiet for WAIT seconds, or WANT
 * bytes came. A reset can come before the connect or the send returns (a listener that refuses on
 * accept, on a loaded machine: a CI run failed so): that is a reset too.
 */
export const PEEK_CLIENT = `
import socket, sys
family = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
host = "::ffff:127.0.0.1" if sys.argv[1] == "6" else "127.0.0.1"
s = socket.socket(family, socket.SOCK_STREAM)
s.settimeout(float(sys.argv[3]))
want = int(sys.argv[5]) if len(sys.argv) > 5 else None
n, end = 0, "eof"
try:
    s.connect((host, int(sys.argv[2])))
    if len(sys.argv) > 4 and sys.argv[4]:
        s.sendall(sys.argv[4].encode())
    while True:
        d = s.recv(65536)
        if not d:
            break
        n += len(d)
        if want is not None and n >= want:
            end = "enough"
            break
except (ConnectionResetError, BrokenPipeError):
    end = "reset"
except socket.timeout:
    end = "timeout"
print("bytes=%d end=%s" % (n, end))
`;

export function createOtherUser(): OtherUser {
  const name = `bsport${randomBytes(4).toString('hex')}`;
  execFileSync('useradd', ['--no-create-home', '--user-group', '--shell', '/usr/sbin/nologin', name], { stdio: 'pipe' });
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  return {
    name,
    uid,
    run: (argv, timeoutMs = 30_000) =>
      run({ command: 'setpriv', args: [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', ...argv] }, { timeoutMs }),
    remove: () => removeUser(name),
  };
}

/**
 * Removes a user the test made, after ending every process it still has: a SIGKILL is delivered
 * but the process lingers until the kernel has torn it down, and userdel refuses a user with a
 * live process (a CI run failed so), so this waits up to 10 s for the last one to go.
 */
export function removeUser(name: string): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    spawnSync('pkill', ['-KILL', '-u', name], { stdio: 'ignore' });
    const left = spawnSync('pgrep', ['-u', name], { encoding: 'utf8' }).stdout.trim();
    if (!left || Date.now() > deadline) {
      break;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  execFileSync('userdel', [name], { stdio: 'pipe' });
}

/** The PEEK_CLIENT result line, parsed. */
export function peekResult(stdout: string): { bytes: number; end: string } | undefined {
  const match = /bytes=(\d+) end=(\w+)/.exec(stdout);
  return match ? { bytes: Number(match[1]), end: match[2] } : undefined;
}
