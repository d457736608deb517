/**
 * Agent actions on the screen, as data: validation of what a language model sends, and the argv
 * that carries each action out inside the sandbox. Pure (no I/O), so every rule is unit-testable.
 *
 * - Input comes from a model and is untrusted: every field is checked (types, integers, ranges,
 *   lengths, allowlists) and anything unexpected is an `ActionInputError` before anything runs.
 * - Nothing goes through a shell: text, key chords and URLs are single argv words after `--` (or
 *   a positional parameter of a fixed script), so no character in them has a meaning.
 * - Coordinates are checked against the screen's actual size (see `pointerSteps`).
 */
import ACTION_SCRIPT from './action.py';
import SCREENSHOT_SCRIPT from './screenshot.py';
import type { Geometry } from './validate';

export { ACTION_SCRIPT, SCREENSHOT_SCRIPT };

export const MAX_TEXT_LENGTH = 10_000;
export const MAX_URL_LENGTH = 8_192;
export const MAX_WAIT_SECONDS = 30;
export const MAX_SCROLL_AMOUNT = 50;
/**
 * Characters per `xdotool type` run (12 s at most). A take-over stops a run at once (see
 * action.py), so runs need not be short; each one costs an exec, and keeps its timeout bounded.
 */
export const TYPE_CHUNK = 1000;
/** Milliseconds between typed characters (`xdotool type --delay`). */
export const TYPE_DELAY_MS = 12;
/** A screenshot larger than this (base64 text from the sandbox) is refused. */
export const MAX_SCREENSHOT_BYTES = 32 * 1024 * 1024;

export type MouseButton = 'left' | 'middle' | 'right';
export type ScrollDirection = 'up' | 'down' | 'left' | 'right';

export interface Point {
  readonly x: number;
  readonly y: number;
}

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

/** Bad input from the agent. `message` is written for the agent: what was wrong and what is allowed. */
export class ActionInputError extends Error {
  readonly code = 'bad_input';

  constructor(message: string) {
    super(message);
    this.name = 'ActionInputError';
  }
}

const BUTTONS: Readonly<Record<MouseButton, number>> = { left: 1, middle: 2, right: 3 };
const SCROLL_BUTTONS: Readonly<Record<ScrollDirection, number>> = { up: 4, down: 5, left: 6, right: 7 };

// ---------------------------------------------------------------------------------------------
// Validation of raw tool input

/** Checks a tool's raw input and returns the action it asks for; throws `ActionInputError`. */
export function parseAction(kind: ActionKind, raw: unknown): AgentAction {
  const input = record(raw);
  switch (kind) {
    case 'screenshot':
      only(input, []);
      return { kind };
    case 'move':
      only(input, ['x', 'y']);
      return { kind, at: point(input, 'x', 'y') };
    case 'click':
      only(input, ['x', 'y', 'button', 'double']);
      return { kind, at: point(input, 'x', 'y'), button: button(input.button), double: flag(input.double, 'double') };
    case 'drag': {
      only(input, ['from', 'to', 'button']);
      const from = record(input.from, 'from');
      const to = record(input.to, 'to');
      only(from, ['x', 'y'], 'from');
      only(to, ['x', 'y'], 'to');
      return { kind, from: point(from, 'x', 'y', 'from.'), to: point(to, 'x', 'y', 'to.'), button: button(input.button) };
    }
    case 'scroll':
      only(input, ['x', 'y', 'direction', 'amount']);
      return { kind, at: point(input, 'x', 'y'), direction: direction(input.direction), amount: amount(input.amount) };
    case 'type':
      only(input, ['text']);
      return { kind, text: text(input.text) };
    case 'key':
      only(input, ['chord']);
      return { kind, chord: normalizeChord(input.chord) };
    case 'openUrl':
      only(input, ['url']);
      return { kind, url: httpUrl(input.url) };
    case 'wait':
      only(input, ['seconds']);
      return { kind, seconds: seconds(input.seconds) };
  }
}

function record(raw: unknown, name = 'input'): Record<string, unknown> {
  if (raw === undefined || raw === null) {
    if (name === 'input') {
      return {};
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ActionInputError(`${name} must be an object`);
  }
  return raw as Record<string, unknown>;
}

function only(input: Record<string, unknown>, allowed: readonly string[], prefix = ''): void {
  const extra = Object.keys(input).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    const where = prefix ? ` in ${prefix}` : '';
    const expected = allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'this tool takes no input';
    throw new ActionInputError(`unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => JSON.stringify(k)).join(', ')}${where} (${expected})`);
  }
}

function point(input: Record<string, unknown>, xKey: string, yKey: string, prefix = ''): Point {
  return { x: coordinate(input[xKey], `${prefix}${xKey}`), y: coordinate(input[yKey], `${prefix}${yKey}`) };
}

function coordinate(value: unknown, name: string): number {
  if (value === undefined) {
    throw new ActionInputError(`${name} is required: a whole number of screen pixels`);
  }
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new ActionInputError(`${name} must be a number of screen pixels, got ${describe(value)}`);
  }
  if (!Number.isInteger(value)) {
    throw new ActionInputError(`${name} must be a whole number of screen pixels, got ${describe(value)}`);
  }
  if (value < 0) {
    throw new ActionInputError(`${name} must not be negative, got ${value}`);
  }
  return value;
}

function button(value: unknown): MouseButton {
  if (value === undefined) {
    return 'left';
  }
  if (typeof value === 'string' && Object.hasOwn(BUTTONS, value)) {
    return value as MouseButton;
  }
  throw new ActionInputError(`button must be "left", "middle" or "right", got ${describe(value)}`);
}

function flag(value: unknown, name: string): boolean {
  if (value === undefined) {
    return false;
  }
  if (typeof value !== 'boolean') {
    throw new ActionInputError(`${name} must be true or false, got ${describe(value)}`);
  }
  return value;
}

function direction(value: unknown): ScrollDirection {
  if (typeof value === 'string' && Object.hasOwn(SCROLL_BUTTONS, value)) {
    return value as ScrollDirection;
  }
  throw new ActionInputError(`direction must be "up", "down", "left" or "right", got ${describe(value)}`);
}

function amount(value: unknown): number {
  if (value === undefined) {
    return 3;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_SCROLL_AMOUNT) {
    throw new ActionInputError(`amount must be a whole number of scroll steps from 1 to ${MAX_SCROLL_AMOUNT}, got ${describe(value)}`);
  }
  return value;
}

function text(value: unknown): string {
  if (typeof value !== 'string') {
    throw new ActionInputError(`text must be a string, got ${describe(value)}`);
  }
  if (value.length === 0) {
    throw new ActionInputError('text is empty: nothing to type');
  }
  if (value.length > MAX_TEXT_LENGTH) {
    throw new ActionInputError(`text is ${value.length} characters long; at most ${MAX_TEXT_LENGTH} can be typed at once (split it, or use a file)`);
  }
  // Newline and tab type Return and Tab; other control characters have no key to type.
  const control = /[\u0000-\u0008\u000b-\u001f\u007f]/.exec(value);
  if (control) {
    throw new ActionInputError(`text contains the control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}, which cannot be typed; use the key tool for special keys`);
  }
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value)) {
    throw new ActionInputError('text contains an unpaired UTF-16 surrogate');
  }
  return value;
}

function seconds(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_WAIT_SECONDS) {
    throw new ActionInputError(`seconds must be a number greater than 0 and at most ${MAX_WAIT_SECONDS}, got ${describe(value)}`);
  }
  return value;
}

/** http or https only, with a host; returned in its normalised form (spaces and controls encoded). */
export function httpUrl(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ActionInputError(`url must be a non-empty string, got ${describe(value)}`);
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ActionInputError(`url ${describe(value)} is not an absolute URL (for example https://example.com/)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ActionInputError(`only http and https URLs can be opened, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.hostname === '') {
    throw new ActionInputError('url has no host');
  }
  const href = url.href;
  if (href.length > MAX_URL_LENGTH) {
    throw new ActionInputError(`url is ${href.length} characters long; at most ${MAX_URL_LENGTH}`);
  }
  return href;
}

function describe(value: unknown): string {
  if (typeof value === 'number') {
    return Number.isNaN(value) ? 'NaN' : String(value);
  }
  if (value === undefined) {
    return 'nothing';
  }
  const json = JSON.stringify(value);
  return json === undefined ? typeof value : json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

// ---------------------------------------------------------------------------------------------
// Key chords

// Maps, not object literals: a lookup must never find an inherited property (`constructor`,
// `__proto__`, `toString`), which would otherwise become an xdotool word.
const MODIFIERS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    ctrl: 'ctrl', control: 'ctrl', ctl: 'ctrl',
    alt: 'alt', option: 'alt', opt: 'alt',
    shift: 'shift',
    super: 'super', win: 'super', windows: 'super', cmd: 'super', command: 'super', meta: 'super',
  }),
);

/** Keysyms by lower-case name or alias. Letters and digits are handled apart (case kept). */
const KEYS: ReadonlyMap<string, string> = buildKeys();

function buildKeys(): Map<string, string> {
  const keys = new Map<string, string>();
  const add = (keysym: string, ...aliases: string[]) => {
    for (const name of [keysym, ...aliases]) {
      keys.set(name.toLowerCase(), keysym);
    }
  };
  add('Return', 'enter', 'ret', 'cr', 'newline');
  add('Tab');
  add('ISO_Left_Tab');
  add('BackSpace', 'backspace', 'bksp');
  add('Delete', 'del');
  add('Insert', 'ins');
  add('Escape', 'esc');
  add('space', 'spacebar');
  add('Home');
  add('End');
  add('Prior', 'page_up', 'pageup', 'pgup');
  add('Next', 'page_down', 'pagedown', 'pgdn');
  add('Left', 'arrowleft', 'leftarrow');
  add('Right', 'arrowright', 'rightarrow');
  add('Up', 'arrowup', 'uparrow');
  add('Down', 'arrowdown', 'downarrow');
  add('Print', 'printscreen', 'prtsc');
  add('Pause');
  add('Break');
  add('Scroll_Lock', 'scrolllock');
  add('Num_Lock', 'numlock');
  add('Caps_Lock', 'capslock');
  add('Menu', 'contextmenu', 'apps');
  for (let n = 1; n <= 24; n++) {
    add(`F${n}`);
  }
  for (const side of ['L', 'R']) {
    for (const mod of ['Control', 'Alt', 'Shift', 'Super', 'Meta', 'Hyper']) {
      add(`${mod}_${side}`);
    }
  }
  for (let n = 0; n <= 9; n++) {
    add(`KP_${n}`);
  }
  for (const kp of ['Enter', 'Add', 'Subtract', 'Multiply', 'Divide', 'Decimal', 'Separator', 'Equal', 'Home', 'End', 'Prior', 'Next', 'Left', 'Right', 'Up', 'Down', 'Insert', 'Delete', 'Begin']) {
    add(`KP_${kp}`);
  }
  const punctuation: Record<string, string> = {
    minus: '-', equal: '=', plus: '+', bracketleft: '[', bracketright: ']', backslash: '\\', semicolon: ';',
    apostrophe: "'", grave: '`', comma: ',', period: '.', slash: '/', exclam: '!', at: '@', numbersign: '#',
    dollar: '$', percent: '%', asciicircum: '^', ampersand: '&', asterisk: '*', parenleft: '(', parenright: ')',
    underscore: '_', colon: ':', quotedbl: '"', less: '<', greater: '>', question: '?', bar: '|',
    braceleft: '{', braceright: '}', asciitilde: '~',
  };
  for (const [keysym, char] of Object.entries(punctuation)) {
    add(keysym, char);
  }
  for (const media of [
    'XF86AudioMute', 'XF86AudioLowerVolume', 'XF86AudioRaiseVolume', 'XF86AudioPlay', 'XF86AudioPause', 'XF86AudioStop',
    'XF86AudioNext', 'XF86AudioPrev', 'XF86Back', 'XF86Forward', 'XF86Refresh', 'XF86Reload', 'XF86Search', 'XF86HomePage',
    'XF86Copy', 'XF86Paste', 'XF86Cut',
  ]) {
    add(media);
  }
  return keys;
}

/**
 * A chord like `ctrl+shift+t`, `Return` or `alt+F4`, in xdotool's keysym names: modifiers (ctrl,
 * alt, shift, super, and aliases), then exactly one key; or a lone key. Names are matched without
 * regard to case against an allowlist, because xdotool silently ignores names it does not know.
 */
export function normalizeChord(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ActionInputError(`chord must be a non-empty string like "ctrl+c" or "Return", got ${describe(value)}`);
  }
  const chord = value.trim();
  if (chord.length > 100) {
    throw new ActionInputError('chord is too long (at most 100 characters): press one chord per call');
  }
  if (/\s/.test(chord)) {
    throw new ActionInputError(`chord ${describe(value)} contains spaces: press one chord per call, with "+" between keys (e.g. "ctrl+shift+t")`);
  }
  // "ctrl++" means ctrl and the plus key.
  const parts = chord.endsWith('++') ? [...chord.slice(0, -2).split('+'), '+'] : chord.split('+');
  if (parts.some((p) => p === '')) {
    throw new ActionInputError(`chord ${describe(value)} has an empty key name: write it like "ctrl+shift+t"`);
  }
  const names = parts.map((part, index) => {
    const last = index === parts.length - 1;
    const modifier = MODIFIERS.get(part.toLowerCase());
    if (modifier && (!last || parts.length === 1)) {
      return modifier;
    }
    if (!last) {
      throw new ActionInputError(`${describe(part)} in ${describe(value)} is not a modifier: only ctrl, alt, shift and super can come before the last key`);
    }
    const key = keyName(part);
    if (key === undefined) {
      throw new ActionInputError(`unknown key name ${describe(part)}: use a letter or digit, F1-F24, Return, Tab, Escape, BackSpace, Delete, space, Home, End, Page_Up, Page_Down, Left, Right, Up, Down, a punctuation name like minus or slash, or a modifier`);
    }
    return key;
  });
  const modifiers = names.slice(0, -1);
  if (new Set(modifiers).size !== modifiers.length) {
    throw new ActionInputError(`chord ${describe(value)} repeats a modifier`);
  }
  return names.join('+');
}

function keyName(part: string): string | undefined {
  if (/^[A-Za-z0-9]$/.test(part)) {
    return part;
  }
  const lower = part.toLowerCase();
  return KEYS.get(lower) ?? MODIFIERS.get(lower);
}

// ---------------------------------------------------------------------------------------------
// Argv

export function parseGeometryOutput(stdout: string): Geometry | undefined {
  const match = /^\s*(\d{1,5})\s+(\d{1,5})\s*$/.exec(stdout);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

function checkOnScreen(p: Point, size: Geometry, name: string): void {
  if (p.x >= size.width || p.y >= size.height) {
    throw new ActionInputError(
      `${name} (${p.x}, ${p.y}) is outside the ${size.width}x${size.height} screen: x must be 0 to ${size.width - 1} and y 0 to ${size.height - 1}`,
    );
  }
}

/**
 * The xdotool argv (one invocation) for a pointer action, after checking its coordinates against
 * `size`. Throws `ActionInputError` for a point off the screen.
 */
export function pointerArgv(action: AgentAction, size: Geometry): string[] {
  switch (action.kind) {
    case 'move':
      checkOnScreen(action.at, size, 'the point');
      return ['xdotool', 'mousemove', String(action.at.x), String(action.at.y)];
    case 'click': {
      checkOnScreen(action.at, size, 'the point');
      const repeat = action.double ? ['--repeat', '2', '--delay', '80'] : [];
      return ['xdotool', 'mousemove', String(action.at.x), String(action.at.y), 'click', ...repeat, String(BUTTONS[action.button])];
    }
    case 'drag': {
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
    case 'scroll':
      checkOnScreen(action.at, size, 'the point');
      return [
        'xdotool', 'mousemove', String(action.at.x), String(action.at.y),
        'click', '--repeat', String(action.amount), '--delay', '40', String(SCROLL_BUTTONS[action.direction]),
      ];
    default:
      throw new TypeError(`${action.kind} is not a pointer action`);
  }
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

/** The browser profile lives in the desktop user's home (not /tmp, a tmpfs emptied on stop). */
export const BROWSER_PROFILE = '.config/botscreen-browser';
/** Chromium's DevTools port inside the sandbox (loopback there); forwarded for host tools. */
export const DEVTOOLS_PORT = 9222;

/**
 * Opens the URL in the sandbox's Chromium, detached (setsid) so it outlives the exec. The script
 * is fixed; the URL is its positional parameter "$1", never parsed by the shell (no URL: just
 * the browser). The shell is needed only to find $HOME and to redirect the browser's output away
 * from the exec stream. One profile, one DevTools port on the sandbox's loopback: the agent's
 * browser and the person's are the same browser, and a second call opens a tab in it.
 */
const OPEN_URL_SCRIPT = [
  'p="$HOME/' + BROWSER_PROFILE + '"',
  'mkdir -p -- "$p" && chmod 700 -- "$p" || exit 2',
  'exec setsid -f chromium --no-sandbox --disable-dev-shm-usage --no-first-run --no-default-browser-check ' +
    `--remote-debugging-port=${DEVTOOLS_PORT} --user-data-dir="$p" "$@" >"$p.log" 2>&1 </dev/null`,
].join('\n');

export function openUrlArgv(url: string): string[] {
  return ['sh', '-c', OPEN_URL_SCRIPT, 'botscreen-open-url', httpUrl(url)];
}

/** The browser on the screen without a URL (its new-tab page, or the windows it already has). */
export function openBrowserArgv(): string[] {
  return ['sh', '-c', OPEN_URL_SCRIPT, 'botscreen-open-url'];
}

export function screenshotArgv(): string[] {
  return ['python3', '-c', SCREENSHOT_SCRIPT];
}

/**
 * `env NAME=VALUE... argv`: runs argv with the screen's session variables. Names must be
 * environment names and values single-line, or this throws (they come from the launcher).
 */
export function withEnv(env: Readonly<Record<string, string>>, argv: readonly string[]): string[] {
  const assignments = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(name) || /[\0\n\r]/.test(value)) {
      throw new TypeError(`unusable environment entry ${JSON.stringify(name)}`);
    }
    return `${name}=${value}`;
  });
  return ['env', ...assignments, ...argv];
}

// ---------------------------------------------------------------------------------------------
// Screenshot output

export interface Screenshot {
  readonly png: Uint8Array;
  readonly width: number;
  readonly height: number;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Width and height from a PNG's IHDR, or undefined when the bytes are not a PNG. */
export function pngSize(png: Uint8Array): Geometry | undefined {
  if (png.length < 24 || PNG_SIGNATURE.some((b, i) => png[i] !== b)) {
    return undefined;
  }
  const type = String.fromCharCode(png[12], png[13], png[14], png[15]);
  if (type !== 'IHDR') {
    return undefined;
  }
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** The screenshot script's output (`W H` line, base64 PNG line), checked. */
export function parseScreenshotOutput(stdout: string): Screenshot {
  if (stdout.length > MAX_SCREENSHOT_BYTES) {
    throw new Error(`the screenshot is larger than ${MAX_SCREENSHOT_BYTES} bytes`);
  }
  const [header = '', body = ''] = stdout.split('\n');
  const size = parseGeometryOutput(header);
  const png = new Uint8Array(Buffer.from(body.trim(), 'base64'));
  const actual = pngSize(png);
  if (!size || !actual || actual.width !== size.width || actual.height !== size.height) {
    throw new Error('the screenshot program did not return a PNG of the screen');
  }
  return { png, width: actual.width, height: actual.height };
}
