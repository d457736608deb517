/**
 * The desktop side of agent actions: the xdotool argv for pointer, typing and key actions, and
 * the wrapper (action.py) that makes every one of them stoppable at once inside the sandbox.
 * Nothing goes through a shell: text and key chords are single argv words after `--`. Pointer
 * coordinates are checked against the screen's actual size here, before any argv exists.
 */
import ACTION_SCRIPT from '../action.py';
import type { Geometry } from '../validate';
import { ActionInputError, type MouseButton, type Point, type ScrollDirection } from './input';

export { ACTION_SCRIPT };

/**
 * Characters per `xdotool type` run (12 s at most). A take-over stops a run at once (see
 * action.py), so runs need not be short; each one costs an exec, and keeps its timeout bounded.
 */
export const TYPE_CHUNK = 1000;
/** Milliseconds between typed characters (`xdotool type --delay`). */
export const TYPE_DELAY_MS = 12;

/** X pointer button numbers. */
const BUTTONS: Readonly<Record<MouseButton, number>> = { left: 1, middle: 2, right: 3 };
/** X scrolls by clicks of these buttons. */
const SCROLL_BUTTONS: Readonly<Record<ScrollDirection, number>> = { up: 4, down: 5, left: 6, right: 7 };

function checkOnScreen(p: Point, size: Geometry, name: string): void {
  if (p.x >= size.width || p.y >= size.height) {
    throw new ActionInputError(
      `${name} (${p.x}, ${p.y}) is outside the ${size.width}x${size.height} screen: x must be 0 to ${size.width - 1} and y 0 to ${size.height - 1}`,
    );
  }
}

// Each pointer argv is one xdotool invocation, built after checking its coordinates against
// `size`; a point off the screen throws `ActionInputError`.

export function moveArgv(action: { readonly at: Point }, size: Geometry): string[] {
  checkOnScreen(action.at, size, 'the point');
  return ['xdotool', 'mousemove', String(action.at.x), String(action.at.y)];
}

export function clickArgv(action: { readonly at: Point; readonly button: MouseButton; readonly double: boolean }, size: Geometry): string[] {
  checkOnScreen(action.at, size, 'the point');
  const repeat = action.double ? ['--repeat', '2', '--delay', '80'] : [];
  return ['xdotool', 'mousemove', String(action.at.x), String(action.at.y), 'click', ...repeat, String(BUTTONS[action.button])];
}

export function dragArgv(action: { readonly from: Point; readonly to: Point; readonly button: MouseButton }, size: Geometry): string[] {
  checkOnScreen(action.from, size, 'from');
  checkOnScreen(action.to, size, 'to');
  const b = String(BUTTONS[action.button]);
  const mid = { x: Math.round((action.from.x + action.to.x) / 2), y: Math.round((action.from.y + action.to.y) / 2) };
  // Intermediate motion and short pauses: many toolkits only start a drag after the pointer
  // moved with the button held.
  return [
    'xdotool',
    'mousemove', String(action.from.x), String(action.from.y),
    'mousedown', b,
    'sleep', '0.1',
    'mousemove', String(mid.x), String(mid.y),
    'sleep', '0.1',
    'mousemove', String(action.to.x), String(action.to.y),
    'sleep', '0.1',
    'mouseup', b,
  ];
}

export function scrollArgv(action: { readonly at: Point; readonly direction: ScrollDirection; readonly amount: number }, size: Geometry): string[] {
  checkOnScreen(action.at, size, 'the point');
  return [
    'xdotool', 'mousemove', String(action.at.x), String(action.at.y),
    'click', '--repeat', String(action.amount), '--delay', '40', String(SCROLL_BUTTONS[action.direction]),
  ];
}

/** Splits text into runs of at most `TYPE_CHUNK` code points (never inside a surrogate pair). */
export function typeChunks(text: string, size = TYPE_CHUNK): string[] {
  const points = Array.from(text);
  const chunks: string[] = [];
  for (let i = 0; i < points.length; i += size) {
    chunks.push(points.slice(i, i + size).join(''));
  }
  return chunks;
}

/** One `xdotool type` run: the text is a single argv word after `--`. */
export function typeArgv(chunk: string): string[] {
  return ['xdotool', 'type', '--delay', String(TYPE_DELAY_MS), '--', chunk];
}

/** A chord already normalized (see ./keys.ts), as one argv word after `--`. */
export function keyArgv(chord: string): string[] {
  return ['xdotool', 'key', '--', chord];
}

/**
 * Released (`xdotool keyup`) at the start of every xdotool action: a modifier left down (by a
 * viewer, or by an action stopped halfway) must never change what the agent does; with Ctrl
 * still down, typing `w` closes a window. A key that is up stays up; one held through a viewer
 * is released too (the X server's key state is shared). The keysyms of every modifier of
 * Xvnc's keymap, Lock keys aside.
 */
export const CLEARED_MODIFIERS: readonly string[] = [
  'Shift_L', 'Shift_R', 'Control_L', 'Control_R', 'Alt_L', 'Alt_R', 'Meta_L', 'Super_L', 'Super_R', 'ISO_Level3_Shift',
];

/** Exit status of the action runner when the action was stopped (see action.py). */
export const ACTION_STOPPED = 124;

/**
 * The argv that carries out an xdotool action so that it can be stopped at once: the modifiers
 * are released first (a `keyup` chained into the same xdotool run), and the whole runs under the
 * action runner (action.py), which kills it inside the sandbox as soon as its stdin sees a byte
 * or its end, then releases whatever keys and buttons the killed xdotool held.
 */
export function stoppableArgv(argv: readonly string[]): string[] {
  if (argv[0] !== 'xdotool' || argv.length < 2) {
    throw new TypeError('only an xdotool action can run stoppable');
  }
  return ['python3', '-c', ACTION_SCRIPT, 'xdotool', 'keyup', ...CLEARED_MODIFIERS, ...argv.slice(1)];
}
