// A throwaway OpenSSH server on 127.0.0.1 for the SSH tests: its own port and ed25519 host key
// (pinned in a private known_hosts), key-only login for one local user, no PAM, no tty, no
// TCP forwarding (the screen needs none of them). Needs root, /usr/sbin/sshd and ssh
// (scripts/setup-sshd-deps.sh) and the desktop packages on this machine for the screen.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import type { SshSettings } from '../../src/core/backends/ssh';
import { run } from './process';

export const SSH_USER = 'botscreen-ssh';
const SSHD = '/usr/sbin/sshd';
const SSH = '/usr/bin/ssh';

export interface Sshd {
  readonly port: number;
  readonly user: string;
  readonly uid: number;
  /** The client's private key (0600, root's). */
  readonly identityFile: string;
  /** An `ssh` wrapper: logs each invocation, then runs ssh with the private known_hosts. */
  readonly sshPath: string;
  /** Backend settings that reach this server. */
  settings(overrides?: Partial<SshSettings>): SshSettings;
  /** One line per time the wrapper ran (to prove that nothing ran). */
  invocations(): string[];
  /** The server's log (VERBOSE), for failures. */
  log(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Resolves once the server sends its SSH banner. */
function banner(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000, () => finish(false));
    socket.once('data', (data) => finish(data.toString('latin1').startsWith('SSH-2.0-')));
    socket.once('error', () => finish(false));
    function finish(ok: boolean) {
      socket.destroy();
      resolve(ok);
    }
  });
}

/** The dedicated local user: created when missing, unlocked for key logins without PAM (`*`). */
export function ensureSshUser(): { uid: number; gid: number; home: string } {
  try {
    run('id', ['-u', SSH_USER]);
  } catch {
    run('useradd', ['--create-home', '--shell', '/bin/bash', '--comment', 'Bot Screen SSH tests', SSH_USER]);
  }
  // useradd leaves `!` (locked); with UsePAM no a locked account cannot log in even with a key.
  run('usermod', ['-p', '*', SSH_USER]);
  const [, , uid, gid, , home] = run('getent', ['passwd', SSH_USER]).trim().split(':');
  const dotSsh = join(home, '.ssh');
  mkdirSync(dotSsh, { recursive: true, mode: 0o700 });
  chownSync(dotSsh, Number(uid), Number(gid));
  chmodSync(dotSsh, 0o700);
  return { uid: Number(uid), gid: Number(gid), home };
}

export interface SshdOptions {
  /** Environment of every session (sshd's SetEnv), e.g. a TMPDIR of the test's own. */
  readonly env?: Readonly<Record<string, string>>;
}

export async function startSshd(options: SshdOptions = {}): Promise<Sshd> {
  for (const program of [SSHD, SSH, '/usr/bin/ssh-keygen']) {
    if (!existsSync(program)) {
      throw new Error(`${program} is missing: run scripts/setup-sshd-deps.sh`);
    }
  }
  const account = ensureSshUser();
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const dir = mkdtempSync('/tmp/botscreen-sshd-');
  chmodSync(dir, 0o700);
  const id = randomBytes(4).toString('hex');
  for (const key of ['host_ed25519', 'client_ed25519']) {
    run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `botscreen-test-${id}`, '-f', join(dir, key)]);
  }
  // Per-run authorized keys in the user's home: StrictModes refuses keys under world-writable /tmp.
  const authorized = join(account.home, '.ssh', `authorized_keys.${id}`);
  writeFileSync(authorized, readFileSync(join(dir, 'client_ed25519.pub')), { mode: 0o600 });
  chownSync(authorized, account.uid, account.gid);

  const logFile = join(dir, 'sshd.log');
  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = await freePort();
    const config = join(dir, 'sshd_config');
    writeFileSync(
      config,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${join(dir, 'host_ed25519')}`,
        'PidFile none',
        'UsePAM no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'AuthenticationMethods publickey',
        `AuthorizedKeysFile .ssh/authorized_keys.${id}`,
        `AllowUsers ${SSH_USER}`,
        'PermitRootLogin no',
        'StrictModes yes',
        'PermitTTY no',
        'AllowTcpForwarding no',
        'AllowAgentForwarding no',
        'X11Forwarding no',
        'PrintMotd no',
        'LogLevel VERBOSE',
        ...Object.entries(options.env ?? {}).map(([name, value]) => `SetEnv ${name}=${value}`),
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const started = spawn(SSHD, ['-D', '-f', config, '-E', logFile], { stdio: 'ignore' });
    const exited = new Promise<boolean>((resolve) => started.once('exit', () => resolve(true)));
    const deadline = Date.now() + 5_000;
    let up = false;
    while (!up && Date.now() < deadline) {
      if (await Promise.race([exited, new Promise<false>((r) => setTimeout(() => r(false), 50))])) {
        break; // the port was taken meanwhile: try another
      }
      up = await banner(port);
    }
    if (up) {
      child = started;
    } else {
      started.kill('SIGKILL');
    }
  }
  if (!child) {
    throw new Error(`sshd did not start: ${existsSync(logFile) ? readFileSync(logFile, 'utf8') : 'no log'}`);
  }
  const sshd = child;
  const killOnExit = () => sshd.kill('SIGKILL');
  process.once('exit', killOnExit);

  const hostKey = readFileSync(join(dir, 'host_ed25519.pub'), 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostKey}\n`, { mode: 0o600 });
  const clientConfig = join(dir, 'ssh_config');
  writeFileSync(
    clientConfig,
    ['Host *', `  UserKnownHostsFile ${knownHosts}`, '  GlobalKnownHostsFile /dev/null', '  LogLevel ERROR', ''].join('\n'),
    { mode: 0o600 },
  );
  const invocationLog = join(dir, 'ssh-invocations.log');
  writeFileSync(invocationLog, '');
  const sshPath = join(dir, 'ssh');
  writeFileSync(sshPath, `#!/bin/sh\necho "ssh with $# words" >>'${invocationLog}'\nexec ${SSH} -F '${clientConfig}' "$@"\n`, {
    mode: 0o700,
  });
  const identityFile = join(dir, 'client_ed25519');

  return {
    port,
    user: SSH_USER,
    uid: account.uid,
    identityFile,
    sshPath,
    settings: (overrides = {}) => ({ host: '127.0.0.1', user: SSH_USER, port, identityFile, path: sshPath, ...overrides }),
    invocations: () => readFileSync(invocationLog, 'utf8').split('\n').filter(Boolean),
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    stop: async () => {
      // Per-connection children first (they outlive the listener), then the listener.
      for (const pid of run('sh', ['-c', `pgrep -P ${sshd.pid} || true`]).split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGTERM');
        } catch {
          // already gone
        }
      }
      const exited = new Promise((resolve) => (sshd.exitCode !== null ? resolve(undefined) : sshd.once('exit', resolve)));
      sshd.kill('SIGTERM');
      await exited;
      process.off('exit', killOnExit);
      rmSync(authorized, { force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
