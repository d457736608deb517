/**
 * Runs agent actions (the entries of ./catalog.ts) on the screen, with the rules that make them
 * safe to hand to a model:
 *
 * 1. The input is validated first (the entry's `parse`): bad input is an error and nothing runs.
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
 * Actions run one at a time, so two tool calls never interleave their input. Listeners
 * (`onAction`) hear of each action as it begins, after every check, right before its input goes
 * to the screen (the live overlay draws it then).
 */
import type { PublishedScreen } from '../launcher';
import { HumanHasControlError, type Lease } from '../lease';
import type { DisposableLike } from '../lifecycle';
import type { Logger } from '../logger';
import type { Placement } from '../placement';
import { ScreenError } from '../problem';
import { run, runStoppable, type RunResult } from '../runner';
import type { Sandbox } from '../sandbox';
import type { ScreenStatus } from '../screen';
import {
  AGENT_ACTIONS,
  parseAction,
  type ActionEntry,
  type ActionKind,
  type ActionOf,
  type ActionResult,
  type ActionSession,
  type AgentAction,
  type ScreenAction,
} from './catalog';
import { ActionInputError } from './input';
import { ActionFailed, displayEnv, EXEC_TIMEOUT_MS, must, withEnv } from './sessionExec';
import { pendingRestores } from './screenSize';
import { ACTION_STOPPED, stoppableArgv } from './xdotool';

/** What the runner needs of the screen controller. */
export interface ScreenAccess {
  readonly status: ScreenStatus;
  placement(): Placement | undefined;
  start(): Promise<ScreenStatus>;
  runningSandbox(): { readonly sandbox: Sandbox; readonly screen: PublishedScreen } | undefined;
  noteActivity(): void;
  /** An exec in the sandbox failed: its liveness is worth checking now (the controller's watch). */
  suspectGone?(): void;
}

/** What the runner needs of the control lease. */
export interface LeaseGate {
  assertAgentMayAct(): Lease;
  assertAgentStillActs(start: Lease): Lease;
  /** Called after every transition this process makes, until the subscription is disposed. */
  onTransition?(listener: () => void): DisposableLike;
}

export interface ActionOptions {
  /** Aborts a wait, and stops a running action. */
  readonly signal?: AbortSignal;
}

/** How often a running action reads the lease, for a take-over by another process (window). */
const CONTROL_POLL_MS = 20;
/** After the stop, how long the sandbox may take to end the action before its exec client is killed. */
const STOP_GRACE_MS = 1000;

/** Sees each action that was carried out, when it ends (the flight recorder's timeline). */
type ActionObserver = (action: AgentAction, result: ActionResult) => void;

export class AgentActionRunner {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly observers = new Set<ActionObserver>();
  private readonly listeners = new Set<(action: AgentAction) => void>();

  constructor(
    private readonly screen: ScreenAccess,
    private readonly lease: LeaseGate,
    private readonly log: Logger,
  ) {}

  /** Calls `listener` as each action begins (it may not throw into the action), until disposed. */
  onAction(listener: (action: AgentAction) => void): DisposableLike {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private began(action: AgentAction): void {
    for (const listener of this.listeners) {
      try {
        listener(action);
      } catch (err) {
        this.log.warn(`an action listener failed: ${String(err)}`);
      }
    }
  }

  /** Validates `input` for `kind` and, when it is good and the agent may act, carries it out. */
  perform<K extends ActionKind>(kind: K, input: unknown, options: ActionOptions = {}): Promise<ActionResult> {
    let action: ActionOf<K>;
    try {
      action = parseAction(kind, input);
    } catch (err) {
      return Promise.resolve(badInput(err));
    }
    const entry = AGENT_ACTIONS[kind] as ActionEntry<ActionOf<K>>;
    const next = this.queue.then(() => this.guarded(entry, action, options));
    this.queue = next.catch(() => undefined);
    void next.then((result) => this.observers.forEach((observe) => {
      try {
        observe(action, result);
      } catch {
        // An observer's failure is its own: never an unhandled rejection here.
      }
    }), () => undefined);
    return next;
  }

  onDidPerform(observer: ActionObserver): DisposableLike {
    this.observers.add(observer);
    return { dispose: () => this.observers.delete(observer) };
  }

  private async guarded<A extends AgentAction>(entry: ActionEntry<A>, action: A, options: ActionOptions): Promise<ActionResult> {
    let start: Lease;
    try {
      start = this.lease.assertAgentMayAct();
    } catch (err) {
      return refusedOrThrow(err, false);
    }
    try {
      let result: ActionResult;
      if (entry.needsScreen) {
        result = await this.act(entry, action, start, options);
      } else {
        this.began(action);
        result = await entry.run(action, options.signal);
      }
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

  private async act<A extends AgentAction>(entry: ScreenAction<A>, action: A, start: Lease, options: ActionOptions): Promise<ActionResult> {
    // A person's view may have resized the screen: act on the size it is being put back to.
    await pendingRestores.settled();
    const target = await this.ensureScreen();
    if ('status' in target) {
      return target;
    }
    const { sandbox, screen } = target;
    const display = displayEnv(screen);
    const session: ActionSession = {
      sandbox,
      screen,
      where: sandbox.onHost ? 'host' : sandbox.name,
      exec: async (what, argv, env) => {
        must(what, await run(sandbox.exec(withEnv(env, argv), { interactive: false }), { timeoutMs: EXEC_TIMEOUT_MS }));
      },
      xdotool: async (what, argv, timeoutMs = EXEC_TIMEOUT_MS) => {
        if (options.signal?.aborted) {
          return false;
        }
        const running = runStoppable(sandbox.exec(withEnv(display, stoppableArgv(argv)), { interactive: true }), { timeoutMs, stopGraceMs: STOP_GRACE_MS });
        let stopped = false;
        const watch = this.watch(start, options.signal, () => {
          stopped = true;
          running.stop();
        });
        let result: RunResult;
        try {
          result = await running.result;
        } finally {
          watch.dispose();
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
      },
      assertStillActs: () => {
        this.lease.assertAgentStillActs(start);
      },
      interrupted: (err, progress) => refusedOrThrow(err, true, progress),
    };
    // Control may have changed hands while the screen started.
    this.lease.assertAgentStillActs(start);
    this.screen.noteActivity();
    this.began(action);
    try {
      return await entry.run(action, session);
    } catch (err) {
      if (err instanceof ActionFailed) {
        // A sandbox that died shows first as a failed exec: say so now, not at the next poll.
        this.screen.suspectGone?.();
      }
      throw err;
    } finally {
      this.screen.noteActivity();
    }
  }

  /**
   * Calls `stop` once, as soon as control changes hands after `start` (this process's transitions
   * at once, other processes' within CONTROL_POLL_MS) or `signal` aborts, until disposed.
   */
  private watch(start: Lease, signal: AbortSignal | undefined, stop: () => void): DisposableLike {
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
    return { dispose: end };
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
