/**
 * The Apptainer (Singularity) backend: instances started from an image, their settings and
 * record, and the CLI's argv builders and parsers.
 */
import type { Command } from '../command';
import { commandFailed, failureDetail } from '../failure';
import type { Logger } from '../logger';
import { backendSetting, ScreenError } from '../problem';
import { PROBE_TIMEOUT_MS, run, runParsed, type ParsedCommand } from '../runner';
import type { Sandbox } from '../sandbox';
import { settingText, type BackendRecord, type Liveness, type SandboxBackend, type SandboxIdentity } from './backend';

export interface ApptainerSettings {
  /** `apptainer`, or `singularity`, or a full path to either. */
  readonly path: string;
  /** What `instance start` runs: a SIF path, a sandbox dir or a `docker://` reference. */
  readonly image: string;
  /** The instance to use; empty means ours, `botscreen_<workspace key>`. */
  readonly instance: string;
}

const INSTANCE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/** An instance name: no glob characters (`instance list` takes patterns), no leading dash. */
export function isValidInstance(name: string): boolean {
  return INSTANCE.test(name);
}

/** A SIF path, directory or URI for `instance start`; no leading dash, no control characters. */
export function isValidApptainerImage(image: string): boolean {
  // eslint-disable-next-line no-control-regex
  return image.length > 0 && image.length <= 4096 && !image.startsWith('-') && !/[\x00-\x1f\x7f]/.test(image);
}

/**
 * What the contained processes get instead of the extension host's environment (which carries
 * its tokens and keys): Apptainer passes the whole host environment into `exec` and `instance
 * start` unless told `--cleanenv`. With it, they get the image's own environment, HOME, PATH,
 * Apptainer's fixed pass-through (TERM and the proxy variables) and `APPTAINERENV_*` the user set
 * on purpose, plus these. A UTF-8 locale is the one thing the desktop needs (`--cleanenv` alone
 * sets LANG=C); DISPLAY and the session variables travel in the argv (`env NAME=VALUE ...`).
 */
export const CONTAINED_ENV: readonly string[] = ['LANG=C.UTF-8'];

function cleanEnv(): string[] {
  return ['--cleanenv', ...CONTAINED_ENV.flatMap((assignment) => ['--env', assignment])];
}

export const APPTAINER: BackendRecord<ApptainerSettings> = {
  userOnlySettings: ['sandbox.apptainer.path'],
  fromImage: true,
  readSettings: (source) => ({
    path: settingText(source.user('sandbox.apptainer.path')) || 'apptainer',
    image: settingText(source.get('sandbox.apptainer.image')),
    instance: settingText(source.get('sandbox.apptainer.instance')),
  }),
  isIdentity: ({ id, name }) => isValidInstance(id) && name === id,
  create: (settings, { workspaceKey, log }) => new ApptainerBackend(settings, workspaceKey, log),
};

export function instanceName(workspaceKey: string): string {
  return `botscreen_${workspaceKey}`;
}

/** Argv builders and output parsers for the Apptainer / Singularity CLI. */
export class ApptainerCli {
  constructor(readonly cli: string) {}

  /**
   * Runs argv in the instance as the invoking user, in a clean environment; stdin passes
   * through, never a tty.
   */
  exec(instance: string, argv: readonly string[]): Command {
    return { command: this.cli, args: ['exec', ...cleanEnv(), `instance://${instance}`, ...argv] };
  }

  /**
   * A new instance isolated from this machine's home, /tmp and environment (`--containall
   * --no-home --cleanenv`) with a writable tmpfs over the image, so the desktop can write its
   * runtime state.
   */
  start(image: string, instance: string): Command {
    return { command: this.cli, args: ['instance', 'start', ...cleanEnv(), '--containall', '--no-home', '--writable-tmpfs', '--', image, instance] };
  }

  /** Names of this user's running instances; undefined when the CLI failed or said something else. */
  list(): ParsedCommand<string[] | undefined> {
    return { command: this.cli, args: ['instance', 'list', '--json'], parse: (result) => (result.exitCode === 0 ? parseList(result.stdout) : undefined) };
  }
}

/** Instance names from `instance list --json`; undefined when the output is not that. */
function parseList(stdout: string): string[] | undefined {
  try {
    const value = JSON.parse(stdout) as { instances?: unknown };
    if (!Array.isArray(value.instances)) {
      return undefined;
    }
    return value.instances
      .map((i: unknown) => (typeof i === 'object' && i !== null ? (i as { instance?: unknown }).instance : undefined))
      .filter((name): name is string => typeof name === 'string');
  } catch {
    return undefined;
  }
}

/**
 * Apptainer (or Singularity) instances. The marker records the instance name, and a reload
 * re-attaches to that instance: `fromIdentity`, `find` and `liveness` never start one; only a
 * start (`prepare`) does, when no instance of the configured name runs.
 */
export class ApptainerBackend implements SandboxBackend {
  readonly imageSetting = backendSetting('apptainer', 'image');
  private readonly cli: ApptainerCli;

  constructor(
    private readonly config: ApptainerSettings,
    private readonly workspaceKey: string,
    private readonly log: Logger,
  ) {
    this.cli = new ApptainerCli(config.path || 'apptainer');
  }

  private get instance(): string {
    const name = this.config.instance.trim() || instanceName(this.workspaceKey);
    if (!isValidInstance(name)) {
      throw new ScreenError({ code: 'badInstance', instance: name });
    }
    return name;
  }

  async prepare(): Promise<Sandbox> {
    const name = this.instance;
    const image = this.config.image.trim();
    if ((await this.running('instance list')).includes(name)) {
      return this.sandbox(name);
    }
    if (!isValidApptainerImage(image)) {
      throw new ScreenError({ code: 'badImage', image, setting: backendSetting('apptainer', 'image') });
    }
    this.log.info(`starting the ${this.cli.cli} instance ${name} from ${image}`);
    const started = await run(this.cli.start(image, name), { timeoutMs: 10 * 60_000 });
    if (started.exitCode !== 0) {
      throw new ScreenError(commandFailed(`${this.cli.cli} instance start`, started));
    }
    return this.sandbox(name);
  }

  async find(): Promise<Sandbox | undefined> {
    const name = this.instance;
    return (await this.running('instance list')).includes(name) ? this.sandbox(name) : undefined;
  }

  async fromIdentity(identity: SandboxIdentity): Promise<Sandbox> {
    if (!isValidInstance(identity.id)) {
      throw new ScreenError({ code: 'badInstance', instance: identity.id });
    }
    return this.sandbox(identity.id);
  }

  async liveness(sandbox: Sandbox): Promise<Liveness> {
    const { result, value: names } = await runParsed(this.cli.list(), { timeoutMs: PROBE_TIMEOUT_MS });
    if (!names) {
      this.log.warn(`could not tell whether the instance ${sandbox.id} is alive: ${failureDetail(result, { stderrOnly: true })}`);
      return 'unknown';
    }
    return names.includes(sandbox.id) ? 'alive' : 'gone';
  }

  /** Names of this user's running instances; a missing CLI or an unreadable answer is a problem. */
  private async running(what: string): Promise<string[]> {
    const { result, value: names } = await runParsed(this.cli.list(), { timeoutMs: PROBE_TIMEOUT_MS });
    if (result.spawnError) {
      throw new ScreenError({ code: 'cliMissing', cli: this.cli.cli, setting: backendSetting('apptainer', 'path') });
    }
    if (!names) {
      throw new ScreenError(commandFailed(`${this.cli.cli} ${what}`, result));
    }
    return names;
  }

  private sandbox(instance: string): Sandbox {
    return {
      backend: 'apptainer',
      id: instance,
      name: instance,
      onHost: false,
      exec: (argv) => this.cli.exec(instance, argv),
    };
  }
}
