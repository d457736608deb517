/**
 * Runs agent actions on the screen, with the rules that make them safe to hand to a model:
 *
 * 1. The input is validated first (`parseAction`): bad input is an error and nothing runs.
 * 2. The control lease is checked: while a person holds control every action is refused, not
 *    queued (`HumanHasControlError`).
 * 3. The screen is found, or started on demand where its placement is the sandbox; a refused
 *    placement returns the refusal; a screen placed on this machine (gateway) is used only when
 *    someone started it.
 * 4. The action runs where the screen runs, through the sandbox's exec (never a shell, never this
 *    machine for a sandbox placement), as the desktop user, with the screen's DISPLAY/XAUTHORITY.
 * 5. The lease is checked again after the action (and between chunks of typed text): when control
 *    changed hands meanwhile, the result is discarded and the action reported as refused.
 * 6. A person taking control stops the running action at once, inside the sandbox: every xdotool
 *    action runs under the action runner (`stoppableArgv`), which kills it when its stdin gets a
 *    byte, written as soon as the lease changes (this process's transitions at once, other
 *    processes' within `CONTROL_POLL_MS`) or the tool is cancelled. Each xdotool action first
 *    releases the modifier keys, so none left down changes what it does.
 *
 * Actions run one at a time, so two tool calls never interleave their input.
 */
import {
  ACTION_STOPPED,
  ActionInputError,
  keyArgv,
  openUrlArgv,
  parseAction,
  parseScreenshotOutput,
  pointerArgv,
  screenshotArgv,
  stoppableArgv,
  typeArgv,
  typeChunks,
  TYPE_DELAY_MS,
  withEnv,
  type ActionKind,
  type AgentAction,
  type Screenshot,
} from './agentActions';
import type { PublishedScreen } from './launcher';
import { HumanHasControlError, type Lease } from './lease';
import type { DisposableLike } from './lifecycle';
import type { Logger } from './logger';
import type { Placement } from './placement';
import { ScreenError, type Problem } from './problem';
import { run, runStoppable, type RunResult } from './runner';
import type { Sandbox } from './sandbox';
import type { ScreenStatus } from './screen';
import { parseGeometry, type Geometry } from './validate';

/** What the runner needs of the screen controller. */
export interface ScreenAccess {
  readonly status: ScreenStatus;
  placement(): Placement | undefined;
  start(): Promise<ScreenStatus>;
  runningSandbox(): { readonly sandbox: Sandbox; readonly screen: PublishedScreen } | undefined;
  noteActivity(): void;
}

/** What the runner needs of the control lease. */
export interface LeaseGate {
  assertAgentMayAct(): Lease;
  assertAgentStillActs(start: Lease): Lease;
  /** Called after every transition this process makes, until the subscription is disposed. */
  onTransition?(listener: () => void): DisposableLike;
}

export type ActionResult =
  | {
      readonly status: 'done';
      readonly action: AgentAction;
      /** The screen size the action was checked against (pointer actions, screenshot). */
      readonly size?: Geometry;
      readonly screenshot?: Screenshot;
      /** Where the action ran: a sandbox's name, or `host`. */
      readonly where: string;
    }
  /** A person holds control (or took it during the action, then `discarded`). */
  | { readonly status: 'humanHasControl'; readonly error: HumanHasControlError; readonly discarded: boolean; readonly progress?: string }
  | { readonly status: 'badInput'; readonly message: string }
  /** The screen cannot run or be reached: a refused placement, a failed start, a gateway screen nobody started. */
  | { readonly status: 'problem'; readonly problem: Problem; readonly placement: Placement | undefined }
  | { readonly status: 'failed'; readonly what: string; readonly detail: string }
  | { readonly status: 'cancelled' };

export interface ActionOptions {
  /** Aborts a wait, and stops a running action. */
  readonly signal?: AbortSignal;
}

const EXEC_TIMEOUT_MS = 20_000;
/** How often a running action reads the lease, for a take-over by another process (window). */
const CONTROL_POLL_MS = 20;
/** After the stop, how long the sandbox may take to end the action before its exec client is killed. */
const STOP_GRACE_MS = 1000;

export class AgentActionRunner {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly screen: ScreenAccess,
    private readonly lease: LeaseGate,
    private readonly log: Logger,
  ) {}

  /** Validates `input` for `kind` and, when it is good and the agent may act, carries it out. */
  perform(kind: ActionKind, input: unknown, options: ActionOptions = {}): Promise<ActionResult> {
    let action: AgentAction;
    try {
      action = parseAction(kind, input);
    } catch (err) {
      return Promise.resolve(badInput(err));
    }
    const next = this.queue.then(() => this.guarded(action, options));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async guarded(action: AgentAction, options: ActionOptions): Promise<ActionResult> {
    let start: Lease;
    try {
      start = this.lease.assertAgentMayAct();
    } catch (err) {
      return refusedOrThrow(err, false);
    }
    try {
      const result = await this.act(action, start, options);
      if (result.status === 'done') {
        // The action happened while control may have changed hands: then its result is void.
        this.lease.assertAgentStillActs(start);
      }
      return result;
    } catch (err) {
      if (err instanceof ActionInputError) {
        return badInput(err);
      }
      if (err instanceof ScreenError) {
        return { status: 'problem', problem: err.problem, placement: this.screen.status.placement ?? this.screen.placement() };
      }
      return refusedOrThrow(err, true);
    }
  }

  private async act(action: AgentAction, start: Lease, options: ActionOptions): Promise<ActionResult> {
    if (action.kind === 'wait') {
      // Waiting needs no screen, but it is an agent action like any other (refused while a
      // person has control, void if they took it meanwhile).
      return (await sleep(action.seconds * 1000, options.signal)) ? { status: 'done', action, where: 'none' } : { status: 'cancelled' };
    }
    const target = await this.ensureScreen();
    if ('status' in target) {
      return target;
    }
    const { sandbox, screen } = target;
    const where = sandbox.onHost ? 'host' : sandbox.name;
    const display = displayEnv(screen);
    const exec = (argv: readonly string[], env: Readonly<Record<string, string>>, timeoutMs = EXEC_TIMEOUT_MS): Promise<RunResult> =>
      run(sandbox.exec(withEnv(env, argv), { interactive: false }), { timeoutMs });
    /**
     * Runs an xdotool action, stopped at once if control changes hands (then this throws
     * `HumanHasControlError`) or the tool is cancelled (then it returns false).
     */
    const xdotool = async (what: string, argv: readonly string[], timeoutMs = EXEC_TIMEOUT_MS): Promise<boolean> => {
      if (options.signal?.aborted) {
        return false;
      }
      const running = runStoppable(sandbox.exec(withEnv(display, stoppableArgv(argv)), { interactive: true }), { timeoutMs, stopGraceMs: STOP_GRACE_MS });
      let stopped = false;
      const unwatch = this.watch(start, options.signal, () => {
        stopped = true;
        running.stop();
      });
      let result: RunResult;
      try {
        result = await running.result;
      } finally {
        unwatch();
      }
      if (stopped) {
        this.lease.assertAgentStillActs(start);
        return false;
      }
      if (result.exitCode === ACTION_STOPPED) {
        // Stopped by no one here: its exec client died. It did not finish.
        throw new ActionFailed(what, 'the action was stopped in the sandbox');
      }
      must(what, result);
      return true;
    };
    // Control may have changed hands while the screen started.
    this.lease.assertAgentStillActs(start);
    this.screen.noteActivity();
    try {
      switch (action.kind) {
        case 'screenshot': {
          const screenshot = await captureScreenshot(target);
          return { status: 'done', action, where, screenshot, size: { width: screenshot.width, height: screenshot.height } };
        }
        case 'move':
        case 'click':
        case 'drag':
        case 'scroll': {
          // The size the launcher published (the screen is never resized: viewers scale it), so a
          // pointer action costs one exec, not a size probe first.
          const size = parseGeometry(screen.geometry);
          if (!size) {
            return { status: 'failed', what: 'reading the screen size', detail: `the screen published ${JSON.stringify(screen.geometry)}` };
          }
          const argv = pointerArgv(action, size);
          return (await xdotool(action.kind, argv)) ? { status: 'done', action, where, size } : { status: 'cancelled' };
        }
        case 'type': {
          const chunks = typeChunks(action.text);
          const total = Array.from(action.text).length;
          let typed = 0;
          for (const chunk of chunks) {
            const points = Array.from(chunk).length;
            let finished: boolean;
            let begun = false;
            try {
              // Before the first chunk the check above has just run; between chunks it is new.
              if (typed > 0) {
                this.lease.assertAgentStillActs(start);
              }
              begun = true;
              finished = await xdotool('typing', typeArgv(chunk), EXEC_TIMEOUT_MS + points * TYPE_DELAY_MS * 4);
            } catch (err) {
              // Stopped inside a chunk: some of it arrived, how much is not known.
              const count = !begun ? String(typed) : typed === 0 ? `at most ${points}` : `${typed} to ${typed + points}`;
              return refusedOrThrow(err, true, `typed ${count} of ${total} characters before control changed hands; the rest was not typed`);
            }
            if (!finished) {
              return { status: 'cancelled' };
            }
            typed += points;
          }
          return { status: 'done', action, where };
        }
        case 'key':
          return (await xdotool('pressing keys', keyArgv(action.chord))) ? { status: 'done', action, where } : { status: 'cancelled' };
        case 'openUrl':
          // The whole session env (D-Bus, XDG dirs) so the browser behaves as if started from the desktop.
          must('opening the browser', await exec(openUrlArgv(action.url), screen.env));
          return { status: 'done', action, where };
      }
    } finally {
      this.screen.noteActivity();
    }
  }

  /**
   * Calls `stop` once, as soon as control changes hands after `start` (this process's transitions
   * at once, other processes' within CONTROL_POLL_MS) or `signal` aborts. Returns the unwatch.
   */
  private watch(start: Lease, signal: AbortSignal | undefined, stop: () => void): () => void {
    let watching = true;
    const end = () => {
      watching = false;
      clearInterval(timer);
      subscription?.dispose();
      signal?.removeEventListener('abort', fire);
    };
    const fire = () => {
      if (watching) {
        end();
        stop();
      }
    };
    const check = () => {
      try {
        this.lease.assertAgentStillActs(start);
      } catch {
        fire();
      }
    };
    const subscription = this.lease.onTransition?.(check);
    const timer = setInterval(check, CONTROL_POLL_MS);
    signal?.addEventListener('abort', fire, { once: true });
    return end;
  }

  /** The running screen, started on demand under a sandbox placement; else why not. */
  private async ensureScreen(): Promise<{ sandbox: Sandbox; screen: PublishedScreen } | ActionResult> {
    const running = this.screen.runningSandbox();
    if (running) {
      return running;
    }
    const placement = this.screen.placement();
    if (placement?.where === 'host') {
      // A screen on this machine is the user's explicit opt-in; an agent never starts one.
      return { status: 'problem', problem: { code: 'notRunning' }, placement };
    }
    // Under a refused placement this throws the refusal without starting anything.
    this.log.info('an agent action starts the screen');
    await this.screen.start();
    const started = this.screen.runningSandbox();
    return started ?? { status: 'problem', problem: { code: 'notRunning' }, placement: this.screen.status.placement };
  }
}

/**
 * A PNG of the running screen, grabbed inside its sandbox (libX11 + the Python standard library,
 * no extra package). Not gated by the lease: people take screenshots too (Save Screenshot).
 */
export async function captureScreenshot(target: { readonly sandbox: Sandbox; readonly screen: PublishedScreen }): Promise<Screenshot> {
  const argv = withEnv(displayEnv(target.screen), screenshotArgv());
  const result = await run(target.sandbox.exec(argv, { interactive: false }), { timeoutMs: EXEC_TIMEOUT_MS });
  must('screenshot', result);
  return parseScreenshotOutput(result.stdout);
}

export class ActionFailed extends Error {
  constructor(readonly what: string, readonly detail: string) {
    super(`${what} failed: ${detail}`);
  }
}

function must(what: string, result: RunResult): void {
  if (result.exitCode !== 0) {
    const detail = result.timedOut
      ? 'timed out'
      : result.spawnError ?? (result.stderr.trim().split('\n').slice(-3).join(' ').slice(0, 300) || `exit code ${String(result.exitCode)}`);
    throw new ActionFailed(what, detail);
  }
}

function displayEnv(screen: PublishedScreen): Record<string, string> {
  const env: Record<string, string> = { DISPLAY: screen.env.DISPLAY ?? screen.display };
  if (screen.env.XAUTHORITY) {
    env.XAUTHORITY = screen.env.XAUTHORITY;
  }
  return env;
}

function badInput(err: unknown): ActionResult {
  if (err instanceof ActionInputError) {
    return { status: 'badInput', message: err.message };
  }
  throw err;
}

function refusedOrThrow(err: unknown, discarded: boolean, progress?: string): ActionResult {
  if (err instanceof HumanHasControlError) {
    return { status: 'humanHasControl', error: err, discarded, progress };
  }
  if (err instanceof ActionFailed) {
    return { status: 'failed', what: err.what, detail: err.detail };
  }
  if (err instanceof Error) {
    return { status: 'failed', what: 'the action', detail: err.message };
  }
  throw err;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
