/**
 * The SSH backend: a host reached with OpenSSH, its settings and record, the argv builder and
 * the private directory for its control sockets.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type { Command } from '../command';
import { approveHost, cannotAsk, type StartConsent } from '../consent';
import type { Logger } from '../logger';
import { backendSetting, ScreenError } from '../problem';
import { shellJoin } from '../quote';
import { failureDetail } from '../failure';
import { PROBE_TIMEOUT_MS, run, type RunResult } from '../runner';
import type { Sandbox } from '../sandbox';
import { isLabel, isValidHost } from '../validate';
import { parses, settingText, type BackendRecord, type Liveness, type SandboxBackend, type SandboxIdentity } from './backend';

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
  /** The host, user or port comes from the workspace settings: a start there needs the user's approval once. */
  readonly hostFromWorkspace?: boolean;
}

/** Where a screen's commands go: validated, never taken from a shell. */
export interface SshDestination {
  readonly host: string;
  readonly user: string;
  readonly port: number | undefined;
}

const USER = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

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

/**
 * `path` as a private directory, created 0700 when absent: its physical path when it is ours,
 * mode 0700, not a symlink, and below directories that only root or we can rename entries of;
 * else undefined. Anyone who could plant a socket there could hijack the multiplexed session.
 */
export function privateDir(path: string): string | undefined {
  const uid = process.getuid!();
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      return undefined;
    }
  }
  try {
    const st = lstatSync(path);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o7777) !== 0o700) {
      return undefined;
    }
    const real = realpathSync(path);
    const again = lstatSync(real);
    if (again.ino !== st.ino || again.dev !== st.dev) {
      return undefined;
    }
    for (let dir = dirname(real); ; dir = dirname(dir)) {
      const up = lstatSync(dir);
      if (!up.isDirectory() || (up.uid !== 0 && up.uid !== uid) || ((up.mode & 0o022) !== 0 && (up.mode & 0o1000) === 0)) {
        return undefined;
      }
      if (dir === dirname(dir)) {
        return real;
      }
    }
  } catch {
    return undefined;
  }
}

let resolvedControlDir: string | undefined;

/**
 * The private per-user directory for the control sockets (short, so the socket path fits):
 * `$XDG_RUNTIME_DIR/botscreen-ssh`, else `botscreen-ssh-<uid>` in the temp dir; when another
 * user holds that name, a fresh `botscreen-ssh-<uid>.XXXXXX` of ours (found again by name,
 * since no one else can make a directory owned by us). Resolved once, proven again for each sandbox.
 */
export function controlDir(): string {
  if (process.getuid === undefined) {
    return join(tmpdir(), 'botscreen-ssh'); // no uids (Windows), and no ControlMaster either
  }
  if (resolvedControlDir !== undefined && privateDir(resolvedControlDir) === resolvedControlDir) {
    return resolvedControlDir;
  }
  const uid = process.getuid();
  const xdg = process.env.XDG_RUNTIME_DIR;
  const named = `botscreen-ssh-${uid}`;
  let found = (xdg && isAbsolute(xdg) ? privateDir(join(xdg, 'botscreen-ssh')) : undefined) ?? privateDir(join(tmpdir(), named));
  if (found === undefined) {
    let entries: string[] = [];
    try {
      entries = readdirSync(tmpdir()).filter((name) => name.startsWith(`${named}.`)).sort();
    } catch {
      // an unreadable temp dir: only a fresh directory can help
    }
    for (const name of entries) {
      if (!lstatSync(join(tmpdir(), name), { throwIfNoEntry: false })?.isSymbolicLink()) {
        found = privateDir(join(tmpdir(), name));
        if (found !== undefined) {
          break;
        }
      }
    }
  }
  if (found === undefined) {
    try {
      found = privateDir(mkdtempSync(join(tmpdir(), `${named}.`)));
    } catch {
      // reported below
    }
  }
  if (found === undefined) {
    throw new ScreenError({ code: 'unsafeControlDir', path: join(tmpdir(), named) });
  }
  resolvedControlDir = found;
  return found;
}

/** One control socket per destination (a master authenticated as one user is never reused for another). */
export function controlPath(d: SshDestination): string {
  const hash = createHash('sha256').update(`${d.user}\0${d.host}\0${d.port ?? ''}`).digest('hex').slice(0, 12);
  return `${controlDir()}/${hash}`;
}

/**
 * Argv builder for OpenSSH. OpenSSH joins every word after the host with spaces and the remote
 * login shell splits the result again, so the remote argv travels as ONE shell-quoted word.
 * Never a tty (`-T`, bytes stay exact), no escape character, `-n` for probes without stdin.
 */
export class SshCli {
  /** Proven private once per sandbox, not on every command (each exec, relay, liveness probe). */
  private readonly controlPath: string;

  constructor(
    readonly path: string,
    readonly destination: SshDestination,
    readonly identity: string | undefined,
  ) {
    this.controlPath = controlPath(destination);
  }

  private options(): string[] {
    const d = this.destination;
    return [
      '-o', 'BatchMode=yes',
      '-o', 'StrictHostKeyChecking=accept-new',
      '-o', 'ConnectTimeout=10',
      '-o', 'ControlMaster=auto',
      '-o', 'ControlPersist=300',
      '-o', `ControlPath=${this.controlPath}`,
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
  async prepare(consent: StartConsent = cannotAsk()): Promise<Sandbox> {
    const destination = sshDestination(this.config);
    // Before the first connection: even a login to a host can run what its ssh_config says.
    await approveHost(consent, sshIdentityId(destination), this.config.hostFromWorkspace === true);
    const sandbox = this.sandboxFor(destination);
    const probe = await this.probe(sandbox);
    if (probe.exitCode !== 0) {
      throw new ScreenError({ code: 'sshFailed', host: sandbox.name, detail: sshDetail(probe) });
    }
    return sandbox;
  }

  /**
   * The configured host, not contacted: the launcher's status call is the real question. A host
   * from the workspace settings is reached only by a start (which asks) or through the marker of
   * one, never just because a window opened.
   */
  async find(): Promise<Sandbox | undefined> {
    if (this.config.hostFromWorkspace) {
      return undefined;
    }
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
    // The control dir is proven as the argv builder is made, so a failure names it at once.
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
  return failureDetail(result, { lines: 3, maxChars: 500, stderrOnly: true });
}

const DESTINATION_KEYS = ['sandbox.ssh.host', 'sandbox.ssh.user', 'sandbox.ssh.port'];

export const SSH: BackendRecord<SshSettings> = {
  userOnlySettings: ['sandbox.ssh.path', 'sandbox.ssh.identityFile'],
  fromImage: false,
  readSettings: (source) => ({
    host: settingText(source.get('sandbox.ssh.host')),
    user: settingText(source.get('sandbox.ssh.user')),
    port: source.get<number | null>('sandbox.ssh.port') ?? undefined,
    identityFile: settingText(source.user('sandbox.ssh.identityFile')),
    path: settingText(source.user('sandbox.ssh.path')) || 'ssh',
    // The destination is host, user and port: a workspace that changes any of them picks it.
    hostFromWorkspace: DESTINATION_KEYS.some((key) => source.fromWorkspace(key)),
  }),
  isIdentity: ({ id, name }) => parses(() => parseSshIdentityId(id)) && isLabel(name),
  create: (settings, { log }) => new SshBackend(settings, log),
};
