/**
 * Key chords for the key tool: the allowlist of X keysym names (with the aliases models use,
 * like `enter` or `cmd`) and the check that turns a chord like `ctrl+shift+t` into the words
 * `xdotool key` takes. Pure, so every rule is unit-testable.
 */
import { ActionInputError, describe } from './input';

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
