/**
 * The agent actions: their types, and one entry each saying which fields its input has (checked
 * with ./input.ts) and how it is carried out on the screen (argv from ./xdotool.ts,
 * ./chromium.ts, ./screenshot.ts). The entries hold no policy: ./agentActionRunner.ts decides
 * whether an action may run at all (control lease, placement, one at a time) and gives each
 * entry a session on the running screen. The language-model tool for each entry (its id and
 * messages) is in src/lm/tools/.
 */
import type { PublishedScreen } from '../launcher';
import type { HumanHasControlError } from '../lease';
import type { Placement } from '../placement';
import type { Problem } from '../problem';
import type { Sandbox } from '../sandbox';
import { parseGeometry, type Geometry } from '../validate';
import { openUrlArgv } from './chromium';
import {
  amount,
  button,
  direction,
  flag,
  httpUrl,
  only,
  point,
  record,
  seconds,
  text,
  type MouseButton,
  type Point,
  type ScrollDirection,
} from './input';
import { normalizeChord } from './keys';
import { captureScreenshot, type Screenshot } from './screenshot';
import { EXEC_TIMEOUT_MS } from './sessionExec';
import { clickArgv, dragArgv, keyArgv, moveArgv, scrollArgv, typeArgv, typeChunks, TYPE_DELAY_MS } from './xdotool';

/** The actions a language model may ask for. */
export type AgentAction =
  | { readonly kind: 'screenshot' }
  | { readonly kind: 'move'; readonly at: Point }
  | { readonly kind: 'click'; readonly at: Point; readonly button: MouseButton; readonly double: boolean }
  | { readonly kind: 'drag'; readonly from: Point; readonly to: Point; readonly button: MouseButton }
  | { readonly kind: 'scroll'; readonly at: Point; readonly direction: ScrollDirection; readonly amount: number }
  | { readonly kind: 'type'; readonly text: string }
  | { readonly kind: 'key'; readonly chord: string }
  | { readonly kind: 'openUrl'; readonly url: string }
  | { readonly kind: 'wait'; readonly seconds: number };

export type ActionKind = AgentAction['kind'];
/** The action of one kind, e.g. `ActionOf<'click'>`. */
export type ActionOf<K extends ActionKind> = Extract<AgentAction, { readonly kind: K }>;

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

/** What an action gets from the runner while it may act on the running screen. */
export interface ActionSession {
  readonly sandbox: Sandbox;
  readonly screen: PublishedScreen;
  /** Where the action runs: the sandbox's name, or `host`. */
  readonly where: string;
  /**
   * Runs an xdotool action in the session, stopped at once if control changes hands (then this
   * throws `HumanHasControlError`) or the tool is cancelled (then it returns false).
   */
  xdotool(what: string, argv: readonly string[], timeoutMs?: number): Promise<boolean>;
  /** Runs a program with `env` (not stoppable); throws `ActionFailed` naming `what` when it fails. */
  exec(what: string, argv: readonly string[], env: Readonly<Record<string, string>>): Promise<void>;
  /** Throws `HumanHasControlError` when control changed hands since the action began. */
  assertStillActs(): void;
  /** The result for an action stopped by `err` partway, `progress` saying how far it got. */
  interrupted(err: unknown, progress: string): ActionResult;
}

/** An action carried out on the running screen (started on demand where placement allows). */
export interface ScreenAction<A extends AgentAction> {
  readonly needsScreen: true;
  /** The action from the tool's input (an object); throws `ActionInputError`. */
  parse(input: Record<string, unknown>): A;
  run(action: A, session: ActionSession): Promise<ActionResult>;
}

/** An action that needs no screen (nothing is started for it), though the lease still applies. */
export interface ScreenlessAction<A extends AgentAction> {
  readonly needsScreen: false;
  parse(input: Record<string, unknown>): A;
  run(action: A, signal: AbortSignal | undefined): Promise<ActionResult>;
}

export type ActionEntry<A extends AgentAction> = ScreenAction<A> | ScreenlessAction<A>;

/**
 * A pointer action: one xdotool run, its coordinates checked against the size the launcher
 * published, so it costs one exec, not a size probe first. That is the size the screen has
 * whenever the agent acts: a person's "Resize the screen to the view" lasts only while they hold
 * control, and the runner waits for the size to be put back (./screenSize.ts).
 */
function pointerAction<K extends 'move' | 'click' | 'drag' | 'scroll'>(
  parse: (input: Record<string, unknown>) => ActionOf<K>,
  argv: (action: ActionOf<K>, size: Geometry) => string[],
): ScreenAction<ActionOf<K>> {
  return {
    needsScreen: true,
    parse,
    async run(action, session) {
      const size = parseGeometry(session.screen.geometry);
      if (!size) {
        return { status: 'failed', what: 'reading the screen size', detail: `the screen published ${JSON.stringify(session.screen.geometry)}` };
      }
      return (await session.xdotool((action as AgentAction).kind, argv(action, size))) ? { status: 'done', action, where: session.where, size } : { status: 'cancelled' };
    },
  };
}

export const AGENT_ACTIONS: { readonly [K in ActionKind]: ActionEntry<ActionOf<K>> } = {
  screenshot: {
    needsScreen: true,
    parse(input) {
      only(input, []);
      return { kind: 'screenshot' };
    },
    async run(action, session) {
      const screenshot = await captureScreenshot(session);
      return { status: 'done', action, where: session.where, screenshot, size: { width: screenshot.width, height: screenshot.height } };
    },
  },
  move: pointerAction((input) => {
    only(input, ['x', 'y']);
    return { kind: 'move', at: point(input, 'x', 'y') };
  }, moveArgv),
  click: pointerAction((input) => {
    only(input, ['x', 'y', 'button', 'double']);
    return { kind: 'click', at: point(input, 'x', 'y'), button: button(input.button), double: flag(input.double, 'double') };
  }, clickArgv),
  drag: pointerAction((input) => {
    only(input, ['from', 'to', 'button']);
    const from = record(input.from, 'from');
    const to = record(input.to, 'to');
    only(from, ['x', 'y'], 'from');
    only(to, ['x', 'y'], 'to');
    return { kind: 'drag', from: point(from, 'x', 'y', 'from.'), to: point(to, 'x', 'y', 'to.'), button: button(input.button) };
  }, dragArgv),
  scroll: pointerAction((input) => {
    only(input, ['x', 'y', 'direction', 'amount']);
    return { kind: 'scroll', at: point(input, 'x', 'y'), direction: direction(input.direction), amount: amount(input.amount) };
  }, scrollArgv),
  type: {
    needsScreen: true,
    parse(input) {
      only(input, ['text']);
      return { kind: 'type', text: text(input.text) };
    },
    async run(action, session) {
      const total = Array.from(action.text).length;
      let typed = 0;
      for (const chunk of typeChunks(action.text)) {
        const points = Array.from(chunk).length;
        let finished: boolean;
        let begun = false;
        try {
          // Before the first chunk the runner's check has just run; between chunks it is new.
          if (typed > 0) {
            session.assertStillActs();
          }
          begun = true;
          finished = await session.xdotool('typing', typeArgv(chunk), EXEC_TIMEOUT_MS + points * TYPE_DELAY_MS * 4);
        } catch (err) {
          // Stopped inside a chunk: some of it arrived, how much is not known.
          const count = !begun ? String(typed) : typed === 0 ? `at most ${points}` : `${typed} to ${typed + points}`;
          return session.interrupted(err, `typed ${count} of ${total} characters before control changed hands; the rest was not typed`);
        }
        if (!finished) {
          return { status: 'cancelled' };
        }
        typed += points;
      }
      return { status: 'done', action, where: session.where };
    },
  },
  key: {
    needsScreen: true,
    parse(input) {
      only(input, ['chord']);
      return { kind: 'key', chord: normalizeChord(input.chord) };
    },
    async run(action, session) {
      return (await session.xdotool('pressing keys', keyArgv(action.chord))) ? { status: 'done', action, where: session.where } : { status: 'cancelled' };
    },
  },
  openUrl: {
    needsScreen: true,
    parse(input) {
      only(input, ['url']);
      return { kind: 'openUrl', url: httpUrl(input.url) };
    },
    async run(action, session) {
      // The whole session env (D-Bus, XDG dirs) so the browser behaves as if started from the desktop.
      await session.exec('opening the browser', openUrlArgv(action.url), session.screen.env);
      return { status: 'done', action, where: session.where };
    },
  },
  wait: {
    // Waiting needs no screen, but it is an agent action like any other (refused while a
    // person has control, void if they took it meanwhile).
    needsScreen: false,
    parse(input) {
      only(input, ['seconds']);
      return { kind: 'wait', seconds: seconds(input.seconds) };
    },
    async run(action, signal) {
      return (await sleep(action.seconds * 1000, signal)) ? { status: 'done', action, where: 'none' } : { status: 'cancelled' };
    },
  },
};

/** Checks a tool's raw input and returns the action it asks for; throws `ActionInputError`. */
export function parseAction<K extends ActionKind>(kind: K, raw: unknown): ActionOf<K> {
  const input = record(raw);
  return (AGENT_ACTIONS[kind] as ActionEntry<ActionOf<K>>).parse(input);
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
