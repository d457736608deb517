/**
 * The Docker backend, and Podman as its variant (the same container management through
 * Podman's CLI, with its own settings): their settings, records and the backend itself.
 */
import { approveReplacement, cannotAsk, type StartConsent } from '../consent';
import { commandFailed, failureDetail, mustSucceed } from '../failure';
import type { Logger } from '../logger';
import type { ProgressReporter } from '../progress';
import { backendSetting, ScreenError } from '../problem';
import { PROBE_TIMEOUT_MS, run, runParsed, type EventCommand } from '../runner';
import { SANDBOX_IMAGE, isOwnImage } from '../sandboxImage';
import type { Sandbox } from '../sandbox';
import { isValidContainerRef, isValidImage } from '../validate';
import type { BackendRecord, ImageSwitch, Liveness, SandboxBackend, SandboxEvent, SandboxIdentity, SettingsSource } from './backend';
import { DESKTOP_USER, DockerCli, engineCli, isDaemonDown, type ManagedContainer } from './dockerCli';

export interface DockerSettings {
  readonly cli: string;
  readonly image: string;
  /** An existing container to attach to (the agent's own); empty means "ours". */
  readonly container: string;
  readonly pidsLimit: number;
  /** The user wrote the image setting in the user settings (even to the default value). */
  readonly imagePinned: boolean;
  /** The image comes from the workspace settings: replacing our container for it needs a yes. */
  readonly imageFromWorkspace?: boolean;
}

const DEFAULT_PIDS_LIMIT = 2048;
const CONTAINER_ID = /^[0-9a-f]{12,64}$/;

/** One engine's settings, `botScreen.sandbox.<engine>.*`. */
function readContainerSettings(source: SettingsSource, engine: 'docker' | 'podman'): DockerSettings {
  const image = `sandbox.${engine}.image`;
  // One limit for every container Bot Screen creates: Podman has no setting of its own.
  const pidsLimit = Number(source.get('sandbox.docker.pidsLimit'));
  return {
    cli: String(source.user(`sandbox.${engine}.path`) ?? '').trim() || engine,
    image: String(source.get(image) ?? '').trim() || SANDBOX_IMAGE,
    imagePinned: source.pinned(image),
    imageFromWorkspace: source.fromWorkspace(image),
    container: String(source.get(`sandbox.${engine}.container`) ?? '').trim(),
    pidsLimit: Number.isInteger(pidsLimit) && pidsLimit >= 64 ? pidsLimit : DEFAULT_PIDS_LIMIT,
  };
}

export const DOCKER: BackendRecord<DockerSettings> = {
  userOnlySettings: ['sandbox.docker.path'],
  fromImage: true,
  readSettings: (source) => readContainerSettings(source, 'docker'),
  isIdentity: ({ id, name }) => CONTAINER_ID.test(id) && isValidContainerRef(name),
  create: (settings, { workspaceKey, log, progress }) => new DockerBackend(settings, workspaceKey, log, undefined, progress),
};

/** Podman: Docker's record with its own settings and CLI. */
export const PODMAN: BackendRecord<DockerSettings> = {
  ...DOCKER,
  userOnlySettings: ['sandbox.podman.path'],
  readSettings: (source) => readContainerSettings(source, 'podman'),
  create: (settings, { workspaceKey, log, progress }) => new DockerBackend(settings, workspaceKey, log, engineCli(settings.cli, 'podman'), progress),
};

/**
 * Docker (and Podman, whose CLI is compatible): our own container, found by labels and
 * workspace, or the agent's container named in the settings, which is never started, stopped,
 * removed or recreated.
 */
export class DockerBackend implements SandboxBackend {
  readonly imageSetting: string;
  /**
   * Whether a container has the desktop user, by container id: a container's users do not
   * change, so every start, stop and reload after the first skips the `docker exec id` probe.
   */
  private readonly desktopUsers = new Map<string, string | undefined>();

  constructor(
    private readonly config: DockerSettings,
    private readonly workspaceKey: string,
    private readonly log: Logger,
    private readonly docker: DockerCli = new DockerCli(config.cli),
    /** Told when a long step starts (a pull), for the person waiting. */
    private readonly progress?: ProgressReporter,
  ) {
    this.imageSetting = backendSetting(docker.backend, 'image');
  }

  async prepare(consent: StartConsent = cannotAsk()): Promise<Sandbox> {
    await this.checkDaemon();
    if (this.config.container) {
      return this.attachNamed(this.config.container);
    }
    if (!isValidImage(this.config.image)) {
      throw new ScreenError({ code: 'badImage', image: this.config.image, setting: backendSetting(this.docker.backend, 'image') });
    }
    const existing = await this.findManaged();
    const name = containerName(this.workspaceKey);
    if (existing && (this.config.imagePinned || this.config.imageFromWorkspace)) {
      const current = await this.containerImage(existing.id);
      const source = this.config.imageFromWorkspace ? 'workspace' : 'user';
      const question = { kind: 'replaceContainer', backend: this.docker.backend, container: name, currentImage: current ?? '', image: this.config.image } as const;
      if (current !== undefined && (await approveReplacement(consent, source, question))) {
        // The new image must exist before the old container goes; if it cannot be had, the
        // old container stays exactly as it is.
        await this.ensureImage(existing.id);
        this.log.info(`replacing ${name} (image ${current}) with a container of the pinned image ${this.config.image}`);
        await mustSucceed(`${this.docker.backend} rm`, this.docker.remove(existing.id));
        return this.create(name);
      }
    }
    if (existing?.running) {
      return this.withDesktopUser(existing.id, name);
    }
    if (existing) {
      this.log.info(`starting the stopped sandbox container ${existing.id.slice(0, 12)}`);
      await mustSucceed(`${this.docker.backend} start`, this.docker.start(existing.id));
      return this.withDesktopUser(existing.id, name);
    }
    await this.ensureImage(undefined);
    return this.create(name);
  }

  /** A default-image change waiting for the user's decision; never for a container not ours. */
  async pendingSwitch(): Promise<ImageSwitch | undefined> {
    // A workspace's image is asked about at Start: Switch would copy it into the user settings.
    if (this.config.container || this.config.imagePinned || this.config.imageFromWorkspace) {
      return undefined;
    }
    const existing = await this.findManaged();
    const current = existing ? await this.containerImage(existing.id) : undefined;
    return existing && current !== undefined && current !== this.config.image
      ? { current, target: this.config.image, containerId: existing.id }
      : undefined;
  }

  private async containerImage(id: string): Promise<string | undefined> {
    const result = await run(this.docker.configImage(id), { timeoutMs: PROBE_TIMEOUT_MS });
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  }

  /**
   * The configured image is present, or pulled now; else a problem saying what stays. Our own
   * image is never pulled: it is built, by the user's decision (the problem offers the build).
   */
  private async ensureImage(keptContainer: string | undefined): Promise<void> {
    const image = this.config.image;
    if ((await run(this.docker.imageExists(image), { timeoutMs: PROBE_TIMEOUT_MS })).exitCode === 0) {
      return;
    }
    if (isOwnImage(image)) {
      throw new ScreenError({ code: 'imageMissing', image, buildable: image === SANDBOX_IMAGE, keptContainer });
    }
    this.log.info(`pulling ${image}`);
    this.progress?.({ kind: 'pullingImage', image });
    const pulled = await run(this.docker.pull(image), { timeoutMs: 30 * 60_000 });
    if (pulled.exitCode !== 0) {
      throw new ScreenError({ code: 'imageUnavailable', image, detail: failureDetail(pulled, { lines: 3 }), keptContainer, setting: backendSetting(this.docker.backend, 'image') });
    }
  }

  private async create(name: string): Promise<Sandbox> {
    this.log.info(`creating the sandbox container ${name} from ${this.config.image}`);
    const created = await mustSucceed(
      `${this.docker.backend} run`,
      this.docker.runDetached({ image: this.config.image, name, workspaceKey: this.workspaceKey, pidsLimit: this.config.pidsLimit }),
    );
    return this.withDesktopUser(created.stdout.trim(), name);
  }

  async find(): Promise<Sandbox | undefined> {
    await this.checkDaemon();
    if (this.config.container) {
      return this.attachNamed(this.config.container);
    }
    const existing = await this.findManaged();
    return existing?.running ? this.withDesktopUser(existing.id, containerName(this.workspaceKey)) : undefined;
  }

  fromIdentity(identity: SandboxIdentity): Promise<Sandbox> {
    return this.withDesktopUser(identity.id, identity.name);
  }

  livenessEvents(sandbox: Sandbox, sinceSeconds: number): EventCommand<SandboxEvent> {
    return this.docker.events(sandbox.id, sinceSeconds);
  }

  async liveness(sandbox: Sandbox): Promise<Liveness> {
    const { result, value: state } = await runParsed(this.docker.inspectState(sandbox.id), { timeoutMs: 5_000 });
    if (state === 'unknown') {
      this.log.warn(`could not tell whether ${sandbox.name} is alive: ${failureDetail(result, { stderrOnly: true })}`);
    }
    return state === 'running' ? 'alive' : state === 'unknown' ? 'unknown' : 'gone';
  }

  private async checkDaemon(): Promise<void> {
    await probeEngine(this.config.cli, this.docker.backend);
  }

  /** The agent's own container: used as it is, never started, stopped, removed or recreated. */
  private async attachNamed(container: string): Promise<Sandbox> {
    if (!isValidContainerRef(container)) {
      throw new ScreenError({ code: 'badContainer', container, setting: backendSetting(this.docker.backend, 'container') });
    }
    const { result, value: state } = await runParsed(this.docker.inspectState(container), { timeoutMs: PROBE_TIMEOUT_MS });
    if (state !== 'running') {
      throw new ScreenError(state === 'unknown' ? commandFailed(`${this.docker.backend} inspect`, result) : { code: 'containerNotRunning', container, setting: backendSetting(this.docker.backend, 'container') });
    }
    return this.withDesktopUser(result.stdout.trim().split(/\s+/)[0], container);
  }

  private async findManaged(): Promise<ManagedContainer | undefined> {
    const ps = this.docker.findManaged(this.workspaceKey);
    const containers = ps.parse(await mustSucceed(`${this.docker.backend} ps`, ps));
    return containers.find((c) => c.running) ?? containers[0];
  }

  /** The desktop runs as `pn` where the image has that user, else as the exec default. */
  private async withDesktopUser(id: string, name: string): Promise<Sandbox> {
    if (!this.desktopUsers.has(id)) {
      const probe = await run(this.docker.execArgs(id, undefined, ['id', '-u', DESKTOP_USER], false), { timeoutMs: PROBE_TIMEOUT_MS });
      if (probe.exitCode === 0) {
        this.desktopUsers.set(id, DESKTOP_USER);
      } else if (/no such user/i.test(probe.stderr)) {
        this.desktopUsers.set(id, undefined);
      } else {
        // The container could not answer (stopped, gone): decide without remembering.
        return this.docker.sandbox(id, name, undefined);
      }
    }
    return this.docker.sandbox(id, name, this.desktopUsers.get(id));
  }
}

export function containerName(workspaceKey: string): string {
  return `botscreen-${workspaceKey}`;
}

/**
 * Whether the Docker (or Podman) engine answers through `cli`: its server version, or the problem
 * that says what is missing (the CLI, the daemon) so the user is offered the fix.
 */
export async function probeEngine(cli: string, backend: 'docker' | 'podman'): Promise<string> {
  const version = await run(engineCli(cli, backend).serverVersion(), { timeoutMs: PROBE_TIMEOUT_MS });
  if (version.spawnError) {
    throw new ScreenError({ code: 'cliMissing', cli, setting: backendSetting(backend, 'path') });
  }
  if (version.exitCode !== 0) {
    const detail = failureDetail(version);
    throw new ScreenError(
      isDaemonDown(detail) || version.timedOut ? { code: 'daemonDown', cli, detail } : { code: 'commandFailed', what: `${cli} version`, detail },
    );
  }
  return version.stdout.trim();
}
