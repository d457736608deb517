import type { ScreenState } from '../protocol';
import { DockerCli, DESKTOP_USER, isDaemonDown } from './docker';
import {
  EXIT_MISSING_BINARIES,
  EXIT_START_TIMEOUT,
  launcherCommand,
  parseMissing,
  parsePublished,
  type PublishedScreen,
} from './launcher';
import type { Logger } from './logger';
import { resolvePlacement, type BackendName, type Placement, type PlacementSetting } from './placement';
import { ScreenError, type Problem } from './problem';
import { rfbRelayCommand } from './relay';
import { openStream, run, type RunResult, type StreamProcess } from './runner';
import { hostSandbox, type Sandbox } from './sandbox';
import { isValidContainerRef, isValidImage, parseGeometry } from './validate';

/** A snapshot of the settings that matter, read by the extension when an action starts. */
export interface ScreenSettings {
  readonly placement: PlacementSetting;
  /** undefined when the configured name is not a backend we know. */
  readonly backend: BackendName | undefined;
  readonly backendRaw: string;
  readonly geometry: string;
  readonly docker: {
    readonly cli: string;
    readonly image: string;
    /** An existing container to attach to (the agent's own); empty means "ours". */
    readonly container: string;
    readonly pidsLimit: number;
  };
  /** Identifies this VS Code window's workspace: container labels, runtime dir. */
  readonly workspaceKey: string;
}

export type { ScreenState };

export interface ScreenStatus {
  readonly state: ScreenState;
  readonly placement: Placement | undefined;
  readonly problem?: Problem;
  readonly sandbox?: { readonly backend: BackendName; readonly id: string; readonly name: string; readonly onHost: boolean };
  readonly screen?: PublishedScreen;
}

const START_TIMEOUT_S = 20;
const PROBE_TIMEOUT_MS = 15_000;
const LIVENESS_INTERVAL_MS = 1_000;

/**
 * Owns one screen: where it goes, starting and stopping it, relays to it, and noticing when
 * its sandbox dies. Operations run one at a time. Nothing here ever falls back to this machine:
 * a screen that belongs in a sandbox is started there or not at all.
 */
export class ScreenController {
  private current: ScreenStatus = { state: 'stopped', placement: undefined };
  private sandbox: Sandbox | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(status: ScreenStatus) => void>();
  private livenessTimer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(
    private readonly settings: () => ScreenSettings,
    private readonly log: Logger,
  ) {}

  get status(): ScreenStatus {
    return this.current;
  }

  onStatus(listener: (status: ScreenStatus) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Where the screen would go with the current settings (no side effects). */
  placement(): Placement | undefined {
    const s = this.settings();
    return s.backend ? resolvePlacement(s.backend, s.placement) : undefined;
  }

  /** Re-attaches to a screen that is already running (after a window reload); creates nothing. */
  attach(): Promise<void> {
    return this.serialize(async () => {
      const placement = this.placement();
      if (!placement || placement.where === 'refused') {
        this.setStatus({ state: placement ? 'refused' : 'stopped', placement, problem: this.placementProblem(placement) });
        return;
      }
      const sandbox = await this.findSandbox(placement).catch((err: unknown) => {
        this.log.debug(`attach: no sandbox to attach to: ${describe(err)}`);
        return undefined;
      });
      if (!sandbox) {
        this.setStatus({ state: 'stopped', placement });
        return;
      }
      const { command, input } = launcherCommand(sandbox, this.settings().workspaceKey, { mode: 'status' });
      const result = await run(command, { input, timeoutMs: PROBE_TIMEOUT_MS });
      const screen = result.exitCode === 0 ? parsePublished(result.stdout) : undefined;
      if (screen) {
        this.log.info(`attached to the running screen ${screen.display} (pid ${screen.pid}) in ${sandbox.name}`);
        this.running(placement, sandbox, screen);
      } else {
        this.setStatus({ state: 'stopped', placement });
      }
    });
  }

  start(): Promise<ScreenStatus> {
    return this.serialize(async () => {
      const placement = this.placement();
      const refusal = this.placementProblem(placement);
      if (!placement || refusal) {
        this.fail('refused', placement, refusal ?? { code: 'refused', backend: this.settings().backendRaw });
      }
      const settings = this.settings();
      if (!parseGeometry(settings.geometry)) {
        this.fail('error', placement, { code: 'badGeometry', geometry: settings.geometry });
      }
      this.setStatus({ state: 'starting', placement });
      let sandbox: Sandbox;
      try {
        sandbox = await this.prepareSandbox(placement!);
      } catch (err) {
        this.fail('blocked', placement, problemOf(err));
      }
      const { command, input } = launcherCommand(sandbox, settings.workspaceKey, {
        mode: 'start',
        geometry: settings.geometry,
        timeoutSeconds: START_TIMEOUT_S,
      });
      this.log.info(`starting the screen in ${sandbox.name} (${settings.geometry})`);
      const result = await run(command, { input, timeoutMs: (START_TIMEOUT_S + 15) * 1000 });
      const screen = result.exitCode === 0 ? parsePublished(result.stdout) : undefined;
      if (screen) {
        this.log.info(`screen ${screen.display} ${screen.adopted ? 'adopted' : 'started'} (launcher pid ${screen.pid}) in ${sandbox.name}`);
        this.running(placement!, sandbox, screen);
        return this.current;
      }
      if (result.exitCode === EXIT_MISSING_BINARIES) {
        this.fail('blocked', placement, { code: 'missingBinaries', onHost: sandbox.onHost, names: parseMissing(result.stdout) });
      }
      if (await this.sandboxGone(sandbox)) {
        this.fail('gone', placement, { code: 'sandboxGone' });
      }
      if (result.exitCode === EXIT_START_TIMEOUT) {
        this.fail('error', placement, { code: 'startTimeout', log: result.stderr.trim() });
      }
      this.fail('error', placement, commandFailed('launcher', result));
    });
  }

  stop(): Promise<ScreenStatus> {
    return this.serialize(async () => {
      const placement = this.current.placement ?? this.placement();
      const sandbox = this.sandbox ?? (placement ? await this.findSandbox(placement).catch(() => undefined) : undefined);
      this.stopLiveness();
      if (!sandbox) {
        this.setStatus({ state: 'stopped', placement });
        return this.current;
      }
      this.setStatus({ ...this.current, state: 'stopping' });
      const { command, input } = launcherCommand(sandbox, this.settings().workspaceKey, { mode: 'stop' });
      const result = await run(command, { input, timeoutMs: PROBE_TIMEOUT_MS });
      this.sandbox = undefined;
      if (result.exitCode !== 0 && (await this.sandboxGone(sandbox))) {
        this.setStatus({ state: 'stopped', placement });
        return this.current;
      }
      if (result.exitCode !== 0) {
        this.fail('error', placement, commandFailed('stop', result));
      }
      this.log.info(`screen stopped in ${sandbox.name}`);
      this.setStatus({ state: 'stopped', placement });
      return this.current;
    });
  }

  /** A new relay to the running screen's RFB socket; the caller owns (and kills) it. */
  openRelay(): StreamProcess {
    const screen = this.current.screen;
    if (this.current.state !== 'running' || !this.sandbox || !screen) {
      throw new ScreenError(this.current.state === 'gone' ? { code: 'sandboxGone' } : { code: 'commandFailed', what: 'relay', detail: 'the screen is not running' });
    }
    const relay = openStream(rfbRelayCommand(this.sandbox, screen.socket));
    const sandbox = this.sandbox;
    void relay.exited.then(({ exitCode, stderr }) => {
      this.log.debug(`relay ${relay.pid} exited with ${exitCode}${stderr ? `: ${stderr.trim()}` : ''}`);
      // 137 is what a docker exec client returns when its container vanished: check now
      // instead of waiting for the next liveness tick.
      if (this.sandbox === sandbox && !this.disposed) {
        void this.checkLiveness();
      }
    });
    return relay;
  }

  /** Checks that the sandbox hosting the running screen still exists; marks it gone if not. */
  async checkLiveness(): Promise<void> {
    const sandbox = this.sandbox;
    if (!sandbox || this.current.state !== 'running') {
      return;
    }
    if (sandbox.onHost) {
      const { command, input } = launcherCommand(sandbox, this.settings().workspaceKey, { mode: 'status' });
      const result = await run(command, { input, timeoutMs: PROBE_TIMEOUT_MS });
      if (result.exitCode === 1 && this.sandbox === sandbox) {
        this.log.warn('the screen on this machine is no longer running');
        this.sandbox = undefined;
        this.stopLiveness();
        this.setStatus({ state: 'stopped', placement: this.current.placement });
      }
      return;
    }
    if ((await this.sandboxGone(sandbox)) && this.sandbox === sandbox) {
      this.log.warn(`the sandbox ${sandbox.name} hosting this screen is gone`);
      this.sandbox = undefined;
      this.stopLiveness();
      this.setStatus({ state: 'gone', placement: this.current.placement, problem: { code: 'sandboxGone' }, sandbox: this.current.sandbox });
    }
  }

  dispose(): void {
    this.disposed = true;
    this.stopLiveness();
    this.listeners.clear();
  }

  private running(placement: Placement, sandbox: Sandbox, screen: PublishedScreen): void {
    this.sandbox = sandbox;
    this.setStatus({
      state: 'running',
      placement,
      screen,
      sandbox: { backend: sandbox.backend, id: sandbox.id, name: sandbox.name, onHost: sandbox.onHost },
    });
    this.stopLiveness();
    if (!sandbox.onHost) {
      this.livenessTimer = setInterval(() => void this.checkLiveness(), LIVENESS_INTERVAL_MS);
    }
  }

  private stopLiveness(): void {
    if (this.livenessTimer) {
      clearInterval(this.livenessTimer);
      this.livenessTimer = undefined;
    }
  }

  private placementProblem(placement: Placement | undefined): Problem | undefined {
    if (!placement) {
      return { code: 'refused', backend: this.settings().backendRaw };
    }
    if (placement.where === 'refused') {
      return { code: 'refused', backend: placement.backend };
    }
    if (placement.where === 'sandbox' && placement.backend !== 'docker') {
      return { code: 'notImplemented', backend: placement.backend };
    }
    return undefined;
  }

  /** The sandbox for a start: created (docker) or checked (an existing container). */
  private async prepareSandbox(placement: Placement): Promise<Sandbox> {
    if (placement.where === 'host') {
      return hostSandbox(placement.backend);
    }
    const { docker: config, workspaceKey } = this.settings();
    const docker = await this.dockerCli(config.cli);
    if (config.container) {
      return this.attachNamedContainer(docker, config.container);
    }
    if (!isValidImage(config.image)) {
      throw new ScreenError({ code: 'badImage', image: config.image });
    }
    const existing = await this.findManaged(docker, workspaceKey);
    if (existing?.running) {
      return this.withDesktopUser(docker, existing.id, containerName(workspaceKey));
    }
    if (existing) {
      this.log.info(`starting the stopped sandbox container ${existing.id.slice(0, 12)}`);
      await this.mustSucceed('docker start', docker.start(existing.id));
      return this.withDesktopUser(docker, existing.id, containerName(workspaceKey));
    }
    const image = await run(docker.imageExists(config.image), { timeoutMs: PROBE_TIMEOUT_MS });
    if (image.exitCode !== 0) {
      throw new ScreenError({ code: 'imageMissing', image: config.image });
    }
    const name = containerName(workspaceKey);
    this.log.info(`creating the sandbox container ${name} from ${config.image}`);
    const created = await this.mustSucceed('docker run', docker.runDetached({ image: config.image, name, workspaceKey, pidsLimit: config.pidsLimit }));
    return this.withDesktopUser(docker, created.stdout.trim(), name);
  }

  /** The sandbox of an existing screen, if any; never creates or starts anything. */
  private async findSandbox(placement: Placement): Promise<Sandbox | undefined> {
    if (placement.where === 'host') {
      return hostSandbox(placement.backend);
    }
    if (placement.where !== 'sandbox' || placement.backend !== 'docker') {
      return undefined;
    }
    const { docker: config, workspaceKey } = this.settings();
    const docker = await this.dockerCli(config.cli);
    if (config.container) {
      return this.attachNamedContainer(docker, config.container);
    }
    const existing = await this.findManaged(docker, workspaceKey);
    return existing?.running ? this.withDesktopUser(docker, existing.id, containerName(workspaceKey)) : undefined;
  }

  private async dockerCli(cli: string): Promise<DockerCli> {
    const docker = new DockerCli(cli);
    const version = await run(docker.serverVersion(), { timeoutMs: PROBE_TIMEOUT_MS });
    if (version.spawnError) {
      throw new ScreenError({ code: 'cliMissing', cli });
    }
    if (version.exitCode !== 0) {
      const detail = (version.stderr || version.stdout).trim() || (version.timedOut ? 'timed out' : '');
      throw new ScreenError(isDaemonDown(detail) || version.timedOut ? { code: 'daemonDown', cli, detail } : { code: 'commandFailed', what: 'docker version', detail });
    }
    return docker;
  }

  /** The agent's own container: used as it is, never started, stopped, removed or recreated. */
  private async attachNamedContainer(docker: DockerCli, container: string): Promise<Sandbox> {
    if (!isValidContainerRef(container)) {
      throw new ScreenError({ code: 'badContainer', container });
    }
    const result = await run(docker.inspectState(container), { timeoutMs: PROBE_TIMEOUT_MS });
    const state = docker.parseState(result);
    if (state !== 'running') {
      throw new ScreenError(state === 'unknown' ? commandFailed('docker inspect', result) : { code: 'containerNotRunning', container });
    }
    return this.withDesktopUser(docker, result.stdout.trim().split(/\s+/)[0], container);
  }

  private async findManaged(docker: DockerCli, workspaceKey: string) {
    const list = await this.mustSucceed('docker ps', docker.findManaged(workspaceKey));
    const containers = docker.parseManaged(list.stdout);
    return containers.find((c) => c.running) ?? containers[0];
  }

  /** The desktop runs as `pn` where the image has that user, else as the exec default. */
  private async withDesktopUser(docker: DockerCli, id: string, name: string): Promise<Sandbox> {
    const probe = await run(docker.execArgs(id, undefined, ['id', '-u', DESKTOP_USER], false), { timeoutMs: PROBE_TIMEOUT_MS });
    return docker.sandbox(id, name, probe.exitCode === 0 ? DESKTOP_USER : undefined);
  }

  private async sandboxGone(sandbox: Sandbox): Promise<boolean> {
    if (sandbox.onHost) {
      return false;
    }
    const docker = new DockerCli(this.settings().docker.cli);
    const result = await run(docker.inspectState(sandbox.id), { timeoutMs: 5_000 });
    const state = docker.parseState(result);
    if (state === 'unknown') {
      this.log.warn(`could not tell whether ${sandbox.name} is alive: ${result.stderr.trim() || 'timed out'}`);
    }
    return state === 'gone' || state === 'stopped';
  }

  private async mustSucceed(what: string, command: Parameters<typeof run>[0]): Promise<RunResult> {
    const result = await run(command, { timeoutMs: 120_000 });
    if (result.exitCode !== 0) {
      throw new ScreenError(commandFailed(what, result));
    }
    return result;
  }

  private fail(state: ScreenState, placement: Placement | undefined, problem: Problem): never {
    this.sandbox = undefined;
    this.stopLiveness();
    this.setStatus({ state, placement, problem });
    throw new ScreenError(problem);
  }

  private setStatus(status: ScreenStatus): void {
    this.current = status;
    for (const listener of [...this.listeners]) {
      listener(status);
    }
  }

  private serialize<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.queue.then(operation, operation);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

export function containerName(workspaceKey: string): string {
  return `botscreen-${workspaceKey}`;
}

function commandFailed(what: string, result: RunResult): Problem {
  const detail = (result.stderr || result.stdout).trim().slice(-1000) || (result.timedOut ? 'timed out' : `exit ${result.exitCode}`);
  return { code: 'commandFailed', what, detail };
}

function problemOf(err: unknown): Problem {
  return err instanceof ScreenError ? err.problem : { code: 'commandFailed', what: 'start', detail: describe(err) };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
