/**
 * The screen controller: one window's screen, from where it goes to starting, adopting,
 * watching and stopping it. It is given its backends (a factory) and its settings; every status
 * change goes through one checked transition.
 */
import type { ImageSwitch, Liveness, SandboxBackend } from './backends/backend';
import { cannotAsk, NO_HOSTS, type ConsentAnswer, type HostMemory, type StartConsent, type StartQuestion } from './consent';
import type { Command } from './command';
import { commandFailed } from './failure';
import {
  EXIT_MISSING_BINARIES,
  EXIT_START_TIMEOUT,
  launcherCommand,
  parseMissing,
  parsePublished,
  type PublishedScreen,
} from './launcher';
import { LivenessWatch } from './livenessWatch';
import type { Logger } from './logger';
import type { Marker, MarkerStore } from './marker';
import { resolvePlacement, type BackendName, type Placement } from './placement';
import { errorMessage, problemOf, ScreenError, type Problem } from './problem';
import { openOwnedRelay, RELAY_EXIT_UNREACHABLE, rfbRelayCommand, rfbRelayMuxCommand } from './relay';
import { PROBE_TIMEOUT_MS, run, type StreamProcess } from './runner';
import type { Sandbox } from './sandbox';
import { isLegalMove, type ScreenState } from './screenState';
import type { ScreenSettings } from './settings';
import { parseGeometry } from './validate';

/**
 * Makes the backend that hosts a placement's screen (backends/registry.ts's SandboxBackends,
 * or a test's fake); undefined for a placement no backend here can host.
 */
export interface BackendFactory {
  backendFor(placement: Placement, settings: ScreenSettings, log: Logger): SandboxBackend | undefined;
}

/** A running screen and the sandbox it runs in: what every action on the screen needs. */
export interface RunningScreen {
  readonly sandbox: Sandbox;
  readonly screen: PublishedScreen;
}

export interface ScreenStatus {
  readonly state: ScreenState;
  readonly placement: Placement | undefined;
  readonly problem?: Problem;
  readonly sandbox?: { readonly backend: BackendName; readonly id: string; readonly name: string; readonly onHost: boolean };
  readonly screen?: PublishedScreen;
  /** Set while a default-image change waits for Switch or Keep. */
  readonly imageSwitch?: ImageSwitch;
}

const START_TIMEOUT_S = 20;

export interface ControllerOptions {
  /** How often idleness is checked (tests shorten it). */
  readonly idleCheckMs?: number;
  /** True while a person holds control: the screen then never idles out. */
  readonly humanHasControl?: () => boolean;
  /**
   * False while the workspace is not trusted (Restricted Mode): then nothing runs at all, not
   * even a probe. Absent means trusted.
   */
  readonly trusted?: () => boolean;
  /** SSH hosts named by a workspace that the user approved (kept across windows). */
  readonly hosts?: HostMemory;
  /** Runs the launcher's commands to completion: the runner's `run`, or a test's in-process stand-in. */
  readonly run?: typeof run;
}

/** The screen that is running, and everything needed to reach it again. */
interface Live {
  readonly placement: Placement;
  readonly backend: SandboxBackend;
  readonly sandbox: Sandbox;
}

/**
 * What the marker says about this workspace's screen, checked: its sandbox is there (`live`),
 * proven gone (marker dropped), `unknown` (the CLI could not tell; the marker stays), or `none`
 * (no usable marker).
 */
type Owner = { readonly kind: 'live'; readonly target: Live } | { readonly kind: 'gone' } | { readonly kind: 'unknown' } | { readonly kind: 'none' };

/**
 * Owns one screen: where it goes, starting and stopping it, relays to it, its marker, and
 * noticing when its sandbox dies. Operations run one at a time. Nothing here ever falls back to
 * this machine: a screen that belongs in a sandbox is started there or not at all.
 */
export class ScreenController {
  private current: ScreenStatus = { state: 'stopped', placement: undefined };
  private live: Live | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(status: ScreenStatus) => void>();
  /** Watches the running screen's sandbox (events, or a backoff poll); none for one on this machine. */
  private liveness: LivenessWatch | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private lastActivity = Date.now();
  /** This window's workspace key (fixed for the window's life): runtime dir, marker, labels. */
  private readonly key: string;
  private disposed = false;
  private readonly run: typeof run;

  constructor(
    private readonly backends: BackendFactory,
    private readonly settings: () => ScreenSettings,
    private readonly log: Logger,
    private readonly markers: MarkerStore,
    private readonly options: ControllerOptions = {},
  ) {
    this.key = settings().workspaceKey;
    this.run = options.run ?? run;
    // What the settings say before anything ran (no CLI): window start may never call attach.
    const placement = this.placement();
    const refusal = this.placementProblem(placement);
    this.current = { state: refusal ? 'refused' : 'stopped', placement, problem: refusal };
  }

  /** Relay bytes and agent actions keep the screen from idling out. */
  noteActivity(): void {
    this.lastActivity = Date.now();
  }

  get status(): ScreenStatus {
    return this.current;
  }

  onStatus(listener: (status: ScreenStatus) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The running screen and the sandbox hosting it, for actions that run on the screen. */
  runningSandbox(): RunningScreen | undefined {
    const screen = this.current.screen;
    return this.current.state === 'running' && this.live && screen ? { sandbox: this.live.sandbox, screen } : undefined;
  }

  /** Where a start would put the screen with the current settings (no side effects). */
  placement(): Placement | undefined {
    const s = this.settings();
    return s.backend ? resolvePlacement(s.backend, s.placement) : undefined;
  }

  /**
   * Whether this workspace has a marker on disk: a file read, no CLI. Window start calls the
   * sandbox's CLI (attach) only when this is true.
   */
  hasMarker(): boolean {
    return this.markers.read(this.key).marker !== undefined;
  }

  /**
   * Finds a screen that outlived a window reload or a restart: first the one the marker records
   * (whatever the settings say now), else one the settings point at. Creates nothing.
   */
  attach(): Promise<void> {
    return this.serialize(async () => {
      if (!this.trusted()) {
        this.transition({ state: 'blocked', placement: this.placement(), problem: { code: 'untrusted' } });
        return;
      }
      const owner = await this.recordedOwner();
      if (owner.kind === 'gone' || owner.kind === 'unknown') {
        return;
      }
      const target = owner.kind === 'live' ? owner.target : await this.settingsTarget(undefined);
      if (!target) {
        const placement = this.placement();
        const problem = this.placementProblem(placement);
        this.transition({ state: problem?.code === 'refused' ? 'refused' : 'stopped', placement, problem: problem?.code === 'refused' ? problem : undefined });
        return;
      }
      const screen = await this.launcherStatus(target.sandbox);
      if (screen) {
        this.log.info(`attached to the running screen ${screen.display} (pid ${screen.pid}) in ${target.sandbox.name}`);
        this.running(target, screen);
      } else {
        this.markers.remove(this.key);
        this.transition({ state: 'stopped', placement: target.placement });
      }
    });
  }

  /**
   * Starts the screen (or adopts the running one). `ask` puts the questions a start must not
   * answer alone (see consent.ts) to a person; without it (an agent tool) they are refused.
   */
  start(ask?: (question: StartQuestion) => Promise<ConsentAnswer>): Promise<ScreenStatus> {
    return this.serialize(async () => {
      if (!this.trusted()) {
        this.fail('blocked', this.placement(), { code: 'untrusted' });
      }
      const hosts = this.options.hosts;
      const consent: StartConsent = ask ? { ask, hosts: hosts ?? NO_HOSTS } : cannotAsk(hosts);
      const settings = this.settings();
      // A screen recorded elsewhere (the settings changed since) is adopted, not duplicated.
      const owner = await this.recordedOwner();
      const adopted = owner.kind === 'live' ? owner.target : undefined;
      const placement = adopted ? adopted.placement : this.placement();
      const refusal = adopted ? undefined : this.placementProblem(placement);
      if (!placement || refusal) {
        this.fail(refusal?.code === 'refused' ? 'refused' : 'blocked', placement, refusal ?? { code: 'refused', backend: settings.backendRaw });
      }
      if (!parseGeometry(settings.geometry)) {
        this.fail('error', placement, { code: 'badGeometry', geometry: settings.geometry });
      }
      this.transition({ state: 'starting', placement });
      let target: Live | undefined;
      try {
        target = adopted ?? (await this.settingsTarget(consent));
      } catch (err) {
        const problem = problemOf(err, 'start');
        if (problem.code === 'needsConsent') {
          // Nothing changed: the screen is as stopped as before, and the caller says why.
          this.transition({ state: 'stopped', placement });
          throw err;
        }
        this.fail('blocked', placement, problem);
      }
      if (!target) {
        // settingsTarget is undefined only for a refused placement, which failed above.
        this.fail('refused', placement, { code: 'refused', backend: settings.backendRaw });
      }
      try {
        const { sandbox } = target;
        const { command, input } = launcherCommand(sandbox, settings.workspaceKey, {
          mode: 'start',
          geometry: settings.geometry,
          timeoutSeconds: START_TIMEOUT_S,
        });
        this.log.info(`starting the screen in ${sandbox.name} (${settings.geometry})`);
        const result = await this.run(command, { input, timeoutMs: (START_TIMEOUT_S + 15) * 1000 });
        const screen = result.exitCode === 0 ? parsePublished(result.stdout) : undefined;
        if (screen) {
          this.log.info(`screen ${screen.display} ${screen.adopted ? 'adopted' : 'started'} (launcher pid ${screen.pid}) in ${sandbox.name}`);
          this.running(target, screen);
          return this.current;
        }
        if (result.exitCode === EXIT_MISSING_BINARIES) {
          const setting = sandbox.onHost ? undefined : target.backend.imageSetting;
          this.fail('blocked', placement, { code: 'missingBinaries', onHost: sandbox.onHost, names: parseMissing(result.stdout), setting });
        }
        if ((await target.backend.liveness(sandbox)) === 'gone') {
          this.fail('gone', placement, { code: 'sandboxGone' });
        }
        if (result.exitCode === EXIT_START_TIMEOUT) {
          // The launcher's log belongs in the log channel; the notification only points there.
          this.log.error(`the screen did not come up within ${START_TIMEOUT_S} s; launcher log:\n${result.stderr.trim()}`);
          this.fail('error', placement, { code: 'startTimeout', log: result.stderr.trim() });
        }
        this.fail('error', placement, commandFailed('launcher', result));
      } catch (err) {
        // Whatever threw past the failure path above (a liveness probe that could not run, a
        // marker that could not be written) still ends the start: never left in `starting`.
        if (this.current.state === 'starting') {
          this.fail('error', placement, problemOf(err, 'start'));
        }
        throw err;
      }
    });
  }

  /** Stops the screen in the sandbox that hosts it: the recorded owner wins over the settings. */
  stop(): Promise<ScreenStatus> {
    return this.serialize(async () => {
      if (!this.trusted()) {
        return this.current;
      }
      const owner = await this.recordedOwner();
      const target = owner.kind === 'live' ? owner.target : (this.live ?? (await this.settingsTarget(undefined).catch(() => undefined)));
      this.stopLiveness();
      clearInterval(this.idleTimer);
      this.live = undefined;
      if (!target) {
        this.markers.remove(this.key);
        this.transition({ ...this.current, state: this.current.state === 'gone' ? 'gone' : 'stopped', screen: undefined });
        return this.current;
      }
      this.transition({ ...this.current, placement: target.placement, state: 'stopping' });
      const { command, input } = launcherCommand(target.sandbox, this.key, { mode: 'stop' });
      const result = await this.run(command, { input, timeoutMs: PROBE_TIMEOUT_MS });
      if (result.exitCode !== 0 && (await target.backend.liveness(target.sandbox)) !== 'gone') {
        this.fail('error', target.placement, commandFailed('stop', result));
      }
      this.markers.remove(this.key);
      this.log.info(`screen stopped in ${target.sandbox.name}`);
      this.transition({ state: 'stopped', placement: target.placement });
      return this.current;
    });
  }

  /**
   * A new relay of a viewer's to the running screen's RFB socket; the caller owns (and kills)
   * it. What it brings counts as activity: a watched screen does not idle out.
   */
  openRelay(): StreamProcess {
    const { command, exited } = this.relayCommand();
    const relay = openOwnedRelay(command, this.log, exited);
    relay.stdout.on('data', () => this.noteActivity());
    return relay;
  }

  /**
   * The command of a relay to the running screen, and what to do when it exits (`endedByOwner`:
   * its owner killed it or closed its stdin). The flight recorder's process runs a `mux` one
   * (./recorderProcess.ts, ./relayMux.ts); its bytes are not activity, so a screen that is only
   * recorded still idles out.
   */
  relayCommand(options: { readonly mux?: boolean } = {}): { command: Command; exited(exitCode: number | null, endedByOwner: boolean): void } {
    const screen = this.current.screen;
    const live = this.live;
    if (this.current.state !== 'running' || !live || !screen) {
      throw new ScreenError(this.current.state === 'gone' ? { code: 'sandboxGone' } : { code: 'notRunning' });
    }
    return {
      command: (options.mux ? rfbRelayMuxCommand : rfbRelayCommand)(live.sandbox, screen.socket),
      exited: (exitCode, endedByOwner) => {
        // 137 is what a docker exec client returns when its container vanished: check now
        // instead of waiting for an event or the next poll. A relay its owner ended (killed, or its
        // stdin closed: a viewer that went, a recorder paused) says nothing
        // about the sandbox, and asking costs a CLI run.
        if (this.live === live && !this.disposed && !endedByOwner) {
          if (exitCode === RELAY_EXIT_UNREACHABLE) {
            this.relayUnreachable();
          } else {
            this.suspectGone();
          }
        }
      },
    };
  }

  /**
   * A relay (or a connection of a mux relay) could not reach the socket in a sandbox that is
   * still there: the desktop itself may have stopped (Xvnc or the session ended).
   */
  relayUnreachable(): void {
    const live = this.live;
    if (live && !this.disposed) {
      void this.checkLiveness().then(() => this.checkDesktop(live));
    }
  }

  /**
   * Something that ran in the sandbox failed (an exec, an action): check its liveness now. The
   * watch coalesces these and starts its poll over from the first interval.
   */
  suspectGone(): void {
    if (this.liveness) {
      this.liveness.checkNow();
    } else {
      void this.checkLiveness();
    }
  }

  /**
   * Checks that the running screen's sandbox (and, on this machine, the screen) still exists;
   * resolves with what the sandbox's check found (undefined when nothing was asked).
   */
  async checkLiveness(): Promise<Liveness | undefined> {
    const live = this.live;
    if (!live || this.current.state !== 'running') {
      return undefined;
    }
    if (live.sandbox.onHost) {
      const { command, input } = launcherCommand(live.sandbox, this.key, { mode: 'status' });
      const result = await this.run(command, { input, timeoutMs: PROBE_TIMEOUT_MS });
      if (result.exitCode === 1 && this.live === live) {
        this.log.warn('the screen on this machine is no longer running');
        this.forget();
        this.transition({ state: 'stopped', placement: live.placement });
      }
      return undefined;
    }
    const liveness = await live.backend.liveness(live.sandbox);
    if (liveness === 'gone' && this.live === live) {
      this.log.warn(`the sandbox ${live.sandbox.name} hosting this screen is gone`);
      this.forget();
      this.transition({ state: 'gone', placement: live.placement, problem: { code: 'sandboxGone' }, sandbox: this.current.sandbox });
    }
    return liveness;
  }

  /**
   * Whether the desktop still runs in a sandbox that does: when not, the screen is stopped with
   * its own problem (the sandbox is there, so Start brings the desktop back in it), distinct
   * from a sandbox that is gone.
   */
  private async checkDesktop(live: Live): Promise<void> {
    if (this.live !== live || this.current.state !== 'running' || live.sandbox.onHost) {
      return; // on this machine checkLiveness already asked the launcher
    }
    const { command, input } = launcherCommand(live.sandbox, this.key, { mode: 'status' });
    const result = await this.run(command, { input, timeoutMs: PROBE_TIMEOUT_MS });
    if (result.exitCode === 1 && this.live === live && this.current.state === 'running') {
      this.log.warn(`the desktop in ${live.sandbox.name} is no longer running (a relay could not reach its socket)`);
      this.forget();
      this.transition({ state: 'stopped', placement: live.placement, problem: { code: 'desktopStopped' }, sandbox: this.current.sandbox });
    }
  }

  dispose(): void {
    void this.live?.backend.disconnect?.().catch(() => undefined);
    this.disposed = true;
    this.stopLiveness();
    clearInterval(this.idleTimer);
    this.listeners.clear();
  }

  /** The sandbox the marker records, checked; a gone or unknown one also sets the status. */
  private async recordedOwner(): Promise<Owner> {
    const read = this.markers.read(this.key);
    if (!read.marker) {
      if (read.problem) {
        this.log.warn(`ignoring the screen marker ${this.markers.path(this.key)}: ${read.problem}`);
      }
      return { kind: 'none' };
    }
    const marker = read.marker;
    const backend = this.backends.backendFor(marker.placement, this.settings(), this.log);
    if (!backend) {
      this.log.warn(`the screen marker names ${marker.sandbox.backend}, which this version cannot reach; ignoring it`);
      return { kind: 'none' };
    }
    const sandbox = await backend.fromIdentity(marker.sandbox);
    const liveness = await backend.liveness(sandbox);
    if (liveness === 'gone') {
      this.log.warn(`the sandbox ${marker.sandbox.name} recorded for this screen is gone`);
      this.markers.remove(this.key);
      this.forget();
      this.transition({ state: 'gone', placement: marker.placement, problem: { code: 'sandboxGone' } });
      return { kind: 'gone' };
    }
    if (liveness === 'unknown') {
      this.transition({ state: 'error', placement: marker.placement, problem: { code: 'sandboxUnknown', name: marker.sandbox.name } });
      return { kind: 'unknown' };
    }
    return { kind: 'live', target: { placement: marker.placement, backend, sandbox } };
  }

  /** The sandbox the current settings point at, created for a start (which brings `consent`). */
  private async settingsTarget(consent: StartConsent | undefined): Promise<Live | undefined> {
    const placement = this.placement();
    if (!placement || this.placementProblem(placement)) {
      return undefined;
    }
    const backend = this.backends.backendFor(placement, this.settings(), this.log);
    if (!backend) {
      return undefined;
    }
    const sandbox = consent ? await backend.prepare(consent) : await backend.find().catch((err: unknown) => {
      this.log.debug(`no sandbox to attach to: ${errorMessage(err)}`);
      return undefined;
    });
    return sandbox ? { placement, backend, sandbox } : undefined;
  }

  private async launcherStatus(sandbox: Sandbox): Promise<PublishedScreen | undefined> {
    const { command, input } = launcherCommand(sandbox, this.key, { mode: 'status' });
    const result = await this.run(command, { input, timeoutMs: PROBE_TIMEOUT_MS });
    return result.exitCode === 0 ? parsePublished(result.stdout) : undefined;
  }

  private running(target: Live, screen: PublishedScreen): void {
    this.live = target;
    const { sandbox, placement } = target;
    try {
      this.markers.write(markerOf(this.key, target, screen));
    } catch (err) {
      // The screen runs regardless; a reload then finds it through the settings instead.
      this.log.warn(`could not record the screen marker: ${errorMessage(err)}`);
    }
    this.transition({
      state: 'running',
      placement,
      screen,
      sandbox: { backend: sandbox.backend, id: sandbox.id, name: sandbox.name, onHost: sandbox.onHost },
    });
    this.stopLiveness();
    if (!sandbox.onHost) {
      const events = target.backend.livenessEvents?.bind(target.backend);
      this.liveness = new LivenessWatch({
        check: () => this.checkLiveness(),
        events: events && ((since) => events(sandbox, since)),
        pollMs: target.backend.livenessIntervalMs,
        log: this.log,
      });
    }
    this.noteActivity();
    clearInterval(this.idleTimer);
    this.idleTimer = setInterval(() => void this.stopIfIdle(), this.options.idleCheckMs ?? 30_000);
  }

  private async stopIfIdle(): Promise<void> {
    const minutes = this.settings().idleStopMinutes;
    const idleMs = Date.now() - this.lastActivity;
    if (this.current.state !== 'running' || !(minutes > 0) || idleMs < minutes * 60_000 || this.options.humanHasControl?.()) {
      return;
    }
    this.log.info(`stopping the screen: idle for ${Math.round(idleMs / 1000)} s (botScreen.idleStopMinutes ${minutes})`);
    await this.stop().catch((err: unknown) => this.log.warn(`idle stop failed: ${errorMessage(err)}`));
  }

  private forget(): void {
    this.live = undefined;
    this.stopLiveness();
    clearInterval(this.idleTimer);
    this.markers.remove(this.key);
  }

  private stopLiveness(): void {
    this.liveness?.dispose();
    this.liveness = undefined;
  }

  private trusted(): boolean {
    return this.options.trusted?.() ?? true;
  }

  private placementProblem(placement: Placement | undefined): Problem | undefined {
    if (!placement) {
      return { code: 'refused', backend: this.settings().backendRaw };
    }
    if (placement.where === 'refused') {
      return { code: 'refused', backend: placement.backend };
    }
    return undefined;
  }

  /** The one failure path: the screen is no longer live, the status says why, the caller gets the problem. */
  private fail(state: ScreenState, placement: Placement | undefined, problem: Problem): never {
    this.live = undefined;
    this.stopLiveness();
    this.transition({ state, placement, problem });
    throw new ScreenError(problem);
  }

  /**
   * The one place the status changes: the move is checked against screenState.ts's table and
   * logged. An illegal move is a bug in this class; it is logged and not made.
   */
  private transition(status: ScreenStatus): void {
    const from = this.current.state;
    if (!isLegalMove(from, status.state)) {
      this.log.error(`illegal screen state change ${from} -> ${status.state} ignored`);
      return;
    }
    if (from !== status.state) {
      this.log.debug(`screen ${from} -> ${status.state}${status.problem ? ` (${status.problem.code})` : ''}`);
    }
    this.current = status;
    for (const listener of [...this.listeners]) {
      listener(status);
    }
  }

  /**
   * Asks the backend whether our sandbox runs an image other than the default, so the view can
   * offer Switch / Keep. Failures only mean "no question to ask now".
   */
  private async refreshImageSwitch(): Promise<void> {
    if (!this.trusted()) {
      return;
    }
    const placement = this.current.placement ?? this.placement();
    const backend = placement?.where === 'sandbox' ? this.backends.backendFor(placement, this.settings(), this.log) : undefined;
    const imageSwitch = backend?.pendingSwitch ? await backend.pendingSwitch().catch(() => undefined) : undefined;
    if (imageSwitch?.current !== this.current.imageSwitch?.current || imageSwitch?.target !== this.current.imageSwitch?.target) {
      this.transition({ ...this.current, imageSwitch });
    }
  }

  private serialize<T>(operation: () => Promise<T>): Promise<T> {
    const withQuestion = () => operation().finally(() => this.refreshImageSwitch());
    const next = this.queue.then(withQuestion, withQuestion);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

function markerOf(workspaceKey: string, target: Live, screen: PublishedScreen): Marker {
  const { sandbox, placement } = target;
  return {
    version: 1,
    workspaceKey,
    placement,
    sandbox: { backend: sandbox.backend, id: sandbox.id, name: sandbox.name },
    display: screen.display,
    runtimeDir: screen.runtimeDir,
    socket: screen.socket,
    pid: screen.pid,
    geometry: screen.geometry,
    startedAt: new Date().toISOString(),
  };
}

