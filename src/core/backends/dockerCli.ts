/**
 * Argv builders and output parsers for the Docker CLI, and Podman's compatible one as a subclass
 * that overrides only what differs (how it records a container's image).
 */
import type { Command } from '../command';
import type { EventCommand, ParsedCommand, RunResult } from '../runner';
import type { Sandbox } from '../sandbox';
import type { SandboxEvent } from './backend';

/** Labels that mark a container as ours; reuse is by these, never by image. */
export const LABEL_MANAGED = 'dev.botscreen.managed';
export const LABEL_WORKSPACE = 'dev.botscreen.workspace';
/** Podman records the image as the user wrote it: its own inspect shows `localhost/...`. */
export const LABEL_REQUESTED_IMAGE = 'dev.botscreen.requested-image';

export const DESKTOP_USER = 'pn';

export interface ContainerSpec {
  readonly image: string;
  readonly name: string;
  readonly workspaceKey: string;
  readonly pidsLimit: number;
}

export interface ManagedContainer {
  readonly id: string;
  readonly running: boolean;
  readonly image: string;
}

/** Argv builders and output parsers for the Docker CLI. */
export class DockerCli {
  readonly backend: 'docker' | 'podman' = 'docker';

  constructor(readonly cli: string) {}

  protected cmd(...args: string[]): Command {
    return { command: this.cli, args };
  }

  private parsed<T>(parse: (result: RunResult) => T, ...args: string[]): ParsedCommand<T> {
    return { ...this.cmd(...args), parse };
  }

  serverVersion(): Command {
    return this.cmd('version', '--format', '{{.Server.Version}}');
  }

  /** Our containers of one workspace (`ps` fails only when the engine does: the caller's `mustSucceed`). */
  findManaged(workspaceKey: string): ParsedCommand<ManagedContainer[]> {
    return this.parsed((result) => parseManaged(result.stdout),
      'ps', '-a', '--no-trunc',
      '--filter', `label=${LABEL_MANAGED}=1`,
      '--filter', `label=${LABEL_WORKSPACE}=${workspaceKey}`,
      '--format', '{{.ID}}\t{{.State}}\t{{.Image}}',
    );
  }

  /**
   * A new sandbox: no published port, every capability dropped but the few an image's own
   * `docker exec -u` and file ownership need, a pids limit that counts threads (the desktop
   * alone runs ~44, one Chromium tab ~212), tini as PID 1 so stopped desktops leave no zombies.
   */
  runDetached(spec: ContainerSpec): Command {
    return this.cmd(
      'run', '-d', '--init',
      '--name', spec.name,
      '--label', `${LABEL_MANAGED}=1`,
      '--label', `${LABEL_WORKSPACE}=${spec.workspaceKey}`,
      ...this.engineLabels(spec),
      '--pids-limit', String(spec.pidsLimit),
      '--shm-size', '1g',
      '--tmpfs', '/tmp:rw,nosuid,size=512m',
      '--cap-drop', 'ALL',
      '--cap-add', 'CHOWN', '--cap-add', 'DAC_OVERRIDE', '--cap-add', 'FOWNER',
      '--cap-add', 'SETUID', '--cap-add', 'SETGID', '--cap-add', 'KILL',
      '--security-opt', 'no-new-privileges',
      '--',
      spec.image, 'sleep', 'infinity',
    );
  }

  /** Labels only one engine needs on the containers it creates. */
  protected engineLabels(_spec: ContainerSpec): string[] {
    return [];
  }

  start(id: string): Command {
    return this.cmd('start', '--', id);
  }

  /** The image name a container was created from (a rebuilt tag does not change it). */
  configImage(id: string): Command {
    return this.cmd('inspect', '--type', 'container', '--format', '{{.Config.Image}}', '--', id);
  }

  pull(image: string): Command {
    return this.cmd('pull', '--', image);
  }

  /** Removes a container; only ever called for one carrying our labels. */
  remove(id: string): Command {
    return this.cmd('rm', '-f', '--', id);
  }

  imageExists(image: string): Command {
    return this.cmd('image', 'inspect', '--format', '{{.Id}}', '--', image);
  }

  /** `{{.Id}} {{.State.Running}}` of one container, read as its state. */
  inspectState(ref: string): ParsedCommand<ContainerState> {
    return this.parsed(parseState, 'inspect', '--type', 'container', '--format', '{{.Id}} {{.State.Running}}', '--', ref);
  }

  /**
   * The container's stop and removal events as they happen (and those of the last `sinceSeconds`,
   * counted on the engine's clock), one a line; filtered by the engine, so the execs every relay
   * and action makes are never sent.
   */
  events(id: string, sinceSeconds: number): EventCommand<SandboxEvent> {
    const { stopped, removed } = this.eventNames;
    const parse = (line: string): SandboxEvent | undefined => (line.trim() === stopped ? 'stopped' : line.trim() === removed ? 'removed' : undefined);
    return {
      ...this.cmd(
        'events', '--since', `${sinceSeconds}s`,
        '--filter', 'type=container', '--filter', `container=${id}`,
        '--filter', `event=${stopped}`, '--filter', `event=${removed}`,
        '--format', this.eventFormat,
      ),
      parseLine: parse,
    };
  }

  /** What the engine calls a container's end and its removal in its events. */
  protected readonly eventNames = { stopped: 'die', removed: 'destroy' };
  protected readonly eventFormat: string = '{{.Action}}';

  /**
   * Runs argv in the container; `-i` keeps stdin open, never `-t` (a tty corrupts bytes). `--`
   * ends the options: a container reference can never be read as one.
   */
  execArgs(containerId: string, user: string | undefined, argv: readonly string[], interactive: boolean): Command {
    return this.cmd(
      'exec',
      ...(interactive ? ['-i'] : []),
      ...(user ? ['-u', user] : []),
      '--',
      containerId,
      ...argv,
    );
  }

  sandbox(containerId: string, name: string, user: string | undefined): Sandbox {
    return {
      backend: this.backend,
      id: containerId,
      name,
      onHost: false,
      exec: (argv, options) => this.execArgs(containerId, user, argv, options.interactive),
      terminal: (env) =>
        this.cmd(
          'exec', '-it',
          ...(user ? ['-u', user] : []),
          ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
          '--', containerId, 'sh', '-c', 'cd "$HOME" 2>/dev/null; exec bash -l',
        ),
    };
  }
}

/**
 * Podman's CLI: Docker's, but its inspect shows the image as it stored it (`localhost/...`), so
 * the image the user asked for travels in a label of our own.
 */
class PodmanCli extends DockerCli {
  override readonly backend = 'podman';

  protected override engineLabels(spec: ContainerSpec): string[] {
    return ['--label', `${LABEL_REQUESTED_IMAGE}=${spec.image}`];
  }

  protected override readonly eventNames = { stopped: 'died', removed: 'remove' };
  protected override readonly eventFormat = '{{.Status}}';

  override configImage(id: string): Command {
    const label = `index .Config.Labels "${LABEL_REQUESTED_IMAGE}"`;
    return this.cmd('inspect', '--type', 'container', '--format', `{{if ${label}}}{{${label}}}{{else}}{{.Config.Image}}{{end}}`, '--', id);
  }
}

/** The CLI of one container engine. */
export function engineCli(cli: string, engine: 'docker' | 'podman'): DockerCli {
  return engine === 'podman' ? new PodmanCli(cli) : new DockerCli(cli);
}

export type ContainerState = 'running' | 'stopped' | 'gone' | 'unknown';

function parseManaged(stdout: string): ManagedContainer[] {
  return stdout
    .split('\n')
    .map((line) => line.trim().split('\t'))
    .filter((fields) => fields.length === 3 && /^[0-9a-f]{12,64}$/.test(fields[0]))
    // Podman 4's {{.State}} is a status sentence (`Up 5 minutes`), Docker's a word.
    .map(([id, state, image]) => ({ id, running: state === 'running' || state.startsWith('Up '), image }));
}

function parseState(result: RunResult): ContainerState {
  if (result.exitCode === 0) {
    return /\btrue\s*$/.test(result.stdout) ? 'running' : 'stopped';
  }
  return isNoSuchContainer(result.stderr) ? 'gone' : 'unknown';
}

export function isNoSuchContainer(stderr: string): boolean {
  return /no such (container|object)|is not running|No such container/i.test(stderr);
}

export function isDaemonDown(stderr: string): boolean {
  return /Cannot connect to the Docker daemon|Is the docker daemon running|error during connect|connect: no such file|permission denied while trying to connect/i.test(stderr);
}
