import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Command } from '../command';
import type { Logger } from '../logger';
import { backendSetting, ScreenError } from '../problem';
import { shellJoin } from '../quote';
import { run, type RunResult } from '../runner';
import type { Sandbox } from '../sandbox';
import { PROBE_TIMEOUT_MS, type Liveness, type SandboxBackend, type SandboxIdentity } from './backend';

export interface SshSettings {
  /** Host name, address or ssh_config alias. */
  readonly host: string;
  /** Login user; empty means ssh's own choice (ssh_config, else the local user name). */
  readonly user: string;
  /** 1-65535; undefined means ssh's own choice (ssh_config, else 22). */
  readonly port?: number;
  /** Private key; empty means ssh's defaults and agent. `~/` is this machine's home. */
  readonly identityFile: string;
  /** The ssh client program. */
  readonly path: string;
}

/** Where a screen's commands go: validated, never taken from a shell. */
export interface SshDestination {
  readonly host: string;
  readonly user: string;
  readonly port: number | undefined;
}

// A host name, IPv4/IPv6 address (with a %zone) or ssh_config alias. No shell metacharacters:
// ssh_config's %h/%r expand into ProxyCommand and `Match exec`, which run through a shell.
const HOST = /^[A-Za-z0-9_.:%]([A-Za-z0-9_.:%-]*)$/;
const USER = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

export function isValidHost(host: string): boolean {
  return host.length > 0 && host.length <= 253 && HOST.test(host);
}

export function isValidSshUser(user: string): boolean {
  return user === '' || (user.length <= 64 && USER.test(user));
}

/** undefined for "not set", a port number, or `false` when the value is not a port. */
export function parsePort(port: unknown): number | undefined | false {
  if (port === undefined || port === null || port === '') {
    return undefined;
  }
  const n = typeof port === 'string' && /^\d+$/.test(port.trim()) ? Number(port) : port;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535 ? n : false;
}

/** The destination of the settings, or a problem naming the first bad value. Runs nothing. */
export function sshDestination(settings: Pick<SshSettings, 'host' | 'user' | 'port'>): SshDestination {
  const host = String(settings.host ?? '');
  if (!isValidHost(host)) {
    throw new ScreenError({ code: 'badHost', host, setting: backendSetting('ssh', 'host') });
  }
  const user = String(settings.user ?? '');
  if (!isValidSshUser(user)) {
    throw new ScreenError({ code: 'badSshUser', user });
  }
  const port = parsePort(settings.port);
  if (port === false) {
    throw new ScreenError({ code: 'badPort', port: String(settings.port), setting: backendSetting('ssh', 'port') });
  }
  return { host, user, port };
}

/** The key file as an absolute path that exists, or undefined when none is configured. */
export function identityPath(identityFile: string): string | undefined {
  const raw = String(identityFile ?? '').trim();
  if (raw === '') {
    return undefined;
  }
  const path = raw === '~' ? homedir() : raw.startsWith('~/') ? join(homedir(), raw.slice(2)) : raw;
  // eslint-disable-next-line no-control-regex
  if (!isAbsolute(path) || /[\x00-\x1f\x7f]/.test(path)) {
    throw new ScreenError({ code: 'badIdentityFile', path: raw });
  }
  try {
    if (!statSync(path).isFile()) {
      throw new Error('not a file');
    }
  } catch {
    throw new ScreenError({ code: 'badIdentityFile', path: raw });
  }
  return path;
}

/** `ssh://user@host:port`: what a marker records; brackets around IPv6 hosts. */
export function sshIdentityId(d: SshDestination): string {
  const host = d.host.includes(':') ? `[${d.host}]` : d.host;
  return `ssh://${d.user ? `${d.user}@` : ''}${host}${d.port ? `:${d.port}` : ''}`;
}

/** The destination a marker recorded, validated again (the file is not trusted). */
export function parseSshIdentityId(id: string): SshDestination {
  const match = /^ssh:\/\/(?:([^@/]*)@)?(\[[^\]]*\]|[^:/\[\]]*)(?::([^:/]*))?$/.exec(id);
  if (!match) {
    throw new ScreenError({ code: 'badHost', host: id });
  }
  const host = match[2].startsWith('[') ? match[2].slice(1, -1) : match[2];
  return sshDestination({ host, user: match[1] ?? '', port: match[3] === undefined ? undefined : Number(match[3]) });
}

/** A private per-user directory for the control sockets: short, so the socket path fits. */
export function controlDir(): string {
  return `/tmp/botscreen-ssh-${process.getuid?.() ?? 'user'}`;
}

/** One control socket per destination (a master authenticated as one user is never reused for another). */
export function controlPath(d: SshDestination): string {
  const hash = createHash('sha256').update(`${d.user}\0${d.host}\0${d.port ?? ''}`).digest('hex').slice(0, 12);
  return `${controlDir()}/${hash}`;
}

/**
 * Creates the control socket directory 0700, or proves an existing one is ours, a real
 * directory and private: anyone who can write there could hijack the multiplexed session.
 */
export function ensureControlDir(dir = controlDir()): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new ScreenError({ code: 'unsafeControlDir', path: dir });
    }
  }
  const st = lstatSync(dir);
  if (!st.isDirectory() || (process.getuid !== undefined && st.uid !== process.getuid())) {
    throw new ScreenError({ code: 'unsafeControlDir', path: dir });
  }
  if ((st.mode & 0o777) !== 0o700) {
    chmodSync(dir, 0o700);
  }
}

/**
 * Argv builder for OpenSSH. OpenSSH joins every word after the host with spaces and the remote
 * login shell splits the result again, so the remote argv travels as ONE shell-quoted word.
 * Never a tty (`-T`, bytes stay exact), no escape character, `-n` for probes without stdin.
 */
export class SshCli {
  constructor(
    readonly path: string,
    readonly destination: SshDestination,
    readonly identity: string | undefined,
  ) {}

  private options(): string[] {
    const d = this.destination;
    return [
      '-o', 'BatchMode=yes',
      '-o', 'StrictHostKeyChecking=accept-new',
      '-o', 'ConnectTimeout=10',
      '-o', 'ControlMaster=auto',
      '-o', 'ControlPersist=300',
      '-o', `ControlPath=${controlPath(d)}`,
      ...(d.port ? ['-p', String(d.port)] : []),
      ...(this.identity ? ['-i', this.identity, '-o', 'IdentitiesOnly=yes'] : []),
      ...(d.user ? ['-l', d.user] : []),
    ];
  }

  /** `argv` run on the host by the login user's shell. */
  exec(argv: readonly string[], interactive: boolean): Command {
    return {
      command: this.path,
      args: [...this.options(), '-T', '-e', 'none', ...(interactive ? [] : ['-n']), '--', this.destination.host, shellJoin(argv)],
    };
  }

  /** Asks the control master (if any) to exit. */
  exitMaster(): Command {
    return { command: this.path, args: [...this.options(), '-O', 'exit', '--', this.destination.host] };
  }
}

/**
 * A host reached over SSH: the screen runs as the login user, in that user's session. The host
 * must carry the desktop itself (TigerVNC, the Xfce parts, dbus, xauth, x11 utils, python3)
 * and the user's login shell must be a POSIX shell (sh, bash, dash, zsh, ksh).
 * Nothing is created on the host but the screen's own runtime dir under its TMPDIR.
 */
export class SshBackend implements SandboxBackend {
  constructor(
    private readonly config: SshSettings,
    private readonly log: Logger,
  ) {}

  /** Validates the settings, then logs in once (which also opens the control master). */
  async prepare(): Promise<Sandbox> {
    const sandbox = this.sandboxFor(sshDestination(this.config));
    const probe = await this.probe(sandbox);
    if (probe.exitCode !== 0) {
      throw new ScreenError({ code: 'sshFailed', host: sandbox.name, detail: sshDetail(probe) });
    }
    return sandbox;
  }

  /** The configured host, not contacted: the launcher's status call is the real question. */
  async find(): Promise<Sandbox | undefined> {
    return this.sandboxFor(sshDestination(this.config));
  }

  /** The host the marker recorded (the settings may have moved on); key and client from the settings. */
  async fromIdentity(identity: SandboxIdentity): Promise<Sandbox> {
    return this.sandboxFor(parseSshIdentityId(identity.id));
  }

  /**
   * `alive` when a login runs `true`; anything else is `unknown`: a refused connection, a
   * timeout or a failed login says nothing about whether the screen's host still exists.
   */
  async liveness(sandbox: Sandbox): Promise<Liveness> {
    const probe = await this.probe(sandbox);
    if (probe.exitCode === 0) {
      return 'alive';
    }
    this.log.warn(`could not reach ${sandbox.name} over ssh: ${sshDetail(probe)}`);
    return 'unknown';
  }

  disconnect(): Promise<void> {
    return this.closeMaster();
  }

  /** Closes the control master of the configured host (deactivation, tests). */
  async closeMaster(): Promise<void> {
    const cli = this.cli(sshDestination(this.config));
    await run(cli.exitMaster(), { timeoutMs: 5_000 });
  }

  private async probe(sandbox: Sandbox): Promise<RunResult> {
    const probe = await run(sandbox.exec(['true'], { interactive: false }), { timeoutMs: PROBE_TIMEOUT_MS });
    if (probe.spawnError) {
      throw new ScreenError({ code: 'cliMissing', cli: this.config.path || 'ssh', setting: backendSetting('ssh', 'path') });
    }
    return probe;
  }

  private cli(d: SshDestination): SshCli {
    const identity = identityPath(this.config.identityFile);
    ensureControlDir();
    return new SshCli(this.config.path || 'ssh', d, identity);
  }

  private sandboxFor(d: SshDestination): Sandbox {
    const cli = this.cli(d);
    return {
      backend: 'ssh',
      id: sshIdentityId(d),
      name: `${d.user ? `${d.user}@` : ''}${d.host}${d.port ? `:${d.port}` : ''}`,
      onHost: false,
      exec: (argv, options) => cli.exec(argv, options.interactive),
    };
  }
}

/** The useful part of a failed ssh: its last stderr lines (ssh reports everything there). */
function sshDetail(result: RunResult): string {
  if (result.timedOut) {
    return 'timed out';
  }
  const lines = result.stderr.trim().split('\n').filter((l) => l.trim() !== '');
  return lines.slice(-3).join(' ').slice(-500) || `exit ${result.exitCode}`;
}
