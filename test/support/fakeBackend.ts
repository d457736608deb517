// A FAKE sandbox backend for unit tests of the screen controller (the real Docker, Podman and
// SSH backends are exercised by test/integration/*). It models a sandbox and the launcher inside
// it as plain state: `alive`, whether a screen runs, what the next start answers. The fake
// decides the launcher's answer when the command is built and `fakeRun` (the controller's
// runner in these tests) returns it in process: no process is spawned, so a test takes
// milliseconds even on a loaded machine, and the controller's own parser and marker code run
// unchanged.
import type { Command } from '../../src/core/command';
import type { RunResult } from '../../src/core/runner';
import type { StartConsent } from '../../src/core/consent';
import type { ImageSwitch, Liveness, SandboxBackend, SandboxIdentity } from '../../src/core/backends/backend';
import type { Logger } from '../../src/core/logger';
import type { ExecBackend, Placement } from '../../src/core/placement';
import type { Sandbox } from '../../src/core/sandbox';
import type { BackendFactory } from '../../src/core/screen';
import type { ScreenSettings } from '../../src/core/settings';

/** What the fake launcher's next start does. */
export type FakeStart = { readonly kind: 'publish' } | { readonly kind: 'exit'; readonly code: number; readonly stdout?: string; readonly stderr?: string };

export class FakeBackend implements SandboxBackend {
  /** Every call the controller made, in order (`prepare`, `launcher start`, `liveness`, ...). */
  readonly calls: string[] = [];
  /** Whether find (attach, or a stop without a marker) sees a sandbox. */
  findsSandbox = true;
  /** What liveness answers. */
  alive: Liveness = 'alive';
  /** Whether a screen runs in the fake sandbox (what the launcher's status reports). */
  screenRunning = false;
  nextStart: FakeStart = { kind: 'publish' };
  /** What the launcher's stop exits with. */
  stopExit = 0;
  /** Thrown by the next prepare. */
  prepareError: Error | undefined;
  /** A prepare waits for this (to hold a start in flight). */
  prepareGate: Promise<void> | undefined;
  /** The answer of pendingSwitch. */
  imageSwitch: ImageSwitch | undefined;
  livenessIntervalMs = 60_000;
  readonly imageSetting: string;

  constructor(
    readonly backend: ExecBackend,
    /** In the form the backend's marker check accepts (a container id, an ssh destination). */
    readonly id: string = backend === 'ssh' ? 'ssh://fake-host' : (backend === 'podman' ? 'e' : 'd').repeat(64),
  ) {
    this.imageSetting = `botScreen.sandbox.${backend}.image`;
  }

  async prepare(consent?: StartConsent): Promise<Sandbox> {
    this.calls.push(consent ? 'prepare (consent)' : 'prepare');
    await this.prepareGate;
    if (this.prepareError) {
      throw this.prepareError;
    }
    return this.sandbox(this.id);
  }

  async find(): Promise<Sandbox | undefined> {
    this.calls.push('find');
    return this.findsSandbox ? this.sandbox(this.id) : undefined;
  }

  async fromIdentity(identity: SandboxIdentity): Promise<Sandbox> {
    this.calls.push(`fromIdentity ${identity.id}`);
    return this.sandbox(identity.id);
  }

  async liveness(): Promise<Liveness> {
    this.calls.push('liveness');
    return this.alive;
  }

  async pendingSwitch(): Promise<ImageSwitch | undefined> {
    return this.imageSwitch;
  }

  async disconnect(): Promise<void> {
    this.calls.push('disconnect');
  }

  private sandbox(id: string): Sandbox {
    return { backend: this.backend, id, name: `fake-${this.backend}`, onHost: false, exec: (argv) => this.exec(argv) };
  }

  /** `bash -c BOOTSTRAP botscreen KEY MODE ...` is a launcher call; anything else (a relay) just ends. */
  private exec(argv: readonly string[]): Command {
    const mode = argv[3] === 'botscreen' ? argv[5] : undefined;
    if (mode === undefined) {
      return answer('', '', 0);
    }
    this.calls.push(`launcher ${mode}`);
    switch (mode) {
      case 'start': {
        const start = this.nextStart;
        if (start.kind === 'exit') {
          return answer(start.stdout ?? '', start.stderr ?? '', start.code);
        }
        const adopted = this.screenRunning;
        this.screenRunning = true;
        return answer(published(adopted), '', 0);
      }
      case 'status':
        return this.screenRunning ? answer(published(true), '', 0) : answer('', '', 1);
      case 'stop':
        if (this.stopExit === 0) {
          this.screenRunning = false;
        }
        return answer('BOTSCREEN_STOPPED=1\n', this.stopExit === 0 ? '' : 'fake stop failed', this.stopExit);
      default:
        return answer('', `unknown mode ${mode}`, 2);
    }
  }
}

/** The launcher's KEY=VALUE output for a live screen. */
function published(adopted: boolean): string {
  return [
    'DISPLAY=:7',
    'BOTSCREEN_PID=4242',
    'BOTSCREEN_SOCKET=/tmp/fake-rdir/rfb.sock',
    'BOTSCREEN_RUNTIME_DIR=/tmp/fake-rdir',
    'BOTSCREEN_GEOMETRY=1280x800',
    `BOTSCREEN_ADOPTED=${adopted ? 1 : 0}`,
    '',
  ].join('\n');
}

const FAKE_COMMAND = 'fake-launcher-answer';

/** A command only `fakeRun` runs: it answers as told. */
function answer(stdout: string, stderr: string, code: number): Command {
  return { command: FAKE_COMMAND, args: [stdout, stderr, String(code)] };
}

/** The controller's runner in these tests: a fake's answer, at once. */
export async function fakeRun(command: Command): Promise<RunResult> {
  if (command.command !== FAKE_COMMAND) {
    throw new Error(`the fake runner runs only fake commands, not ${command.command}`);
  }
  const [stdout, stderr, code] = command.args;
  return { stdout, stderr, exitCode: Number(code), timedOut: false };
}

/** A backend factory that hands out the given fakes by backend name (none for host placements). */
export function fakeBackends(...fakes: FakeBackend[]): BackendFactory & { made: Array<Placement> } {
  const made: Placement[] = [];
  return {
    made,
    backendFor(placement: Placement, _settings: ScreenSettings, _log: Logger) {
      made.push(placement);
      return placement.where === 'sandbox' ? fakes.find((fake) => fake.backend === placement.backend) : undefined;
    },
  };
}
