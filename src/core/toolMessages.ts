/**
 * How an agent tool's input is shown to the person who confirms it (VS Code's tool confirmation
 * and progress messages): the exact text, URL or key chord, shortened where it is long, with every
 * character that would not show (controls, bidi overrides, zero-width marks) made visible, and
 * quoted as Markdown code so nothing in it renders as a link, emphasis or HTML. The sentences
 * around these pieces are the tools' own (src/lm/tools/, localized there); this file holds no
 * `vscode` import.
 */

/** Code points shown of a long text before the rest is left out (with a note of the total). */
export const CONFIRM_TEXT_MAX = 500;
/** Code points shown in a one-line progress message. */
export const INLINE_TEXT_MAX = 60;

/**
 * Characters that change how the rest reads, or do not show at all: C0/C1 controls (except
 * newline and tab), bidirectional controls (an RLO can make `txt.exe` read as `exe.txt`),
 * zero-width and invisible formatting characters, and the BOM.
 */
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/gu;

export interface ShownText {
  /** What to display: at most `max` code points of the input, invisible characters spelled out. */
  readonly shown: string;
  /** The input's length in code points (what a person counts as characters). */
  readonly total: number;
  /** True when `shown` is only the beginning. */
  readonly truncated: boolean;
}

/**
 * The first `max` code points of `text` (never splitting a surrogate pair), with invisible
 * characters written as `\u{…}` (a carriage return too: it types nothing). With `oneLine`,
 * newlines and tabs are shown as ⏎ and ⇥.
 */
export function showText(text: string, max: number, oneLine = false): ShownText {
  const points = Array.from(text);
  const head = points.slice(0, max).join('');
  let shown = head.replace(INVISIBLE, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`);
  if (oneLine) {
    shown = shown.replace(/\n/g, '⏎').replace(/\t/g, '⇥');
  }
  return { shown, total: points.length, truncated: points.length > max };
}

/** `text` as one Markdown inline code span, whatever backticks it holds. */
export function markdownCodeSpan(text: string): string {
  const fence = '`'.repeat(longestRun(text, '`') + 1);
  // A span that starts or ends with a backtick (or is all spaces) needs padding, which
  // CommonMark strips again.
  const pad = /^`|`$/.test(text) || /^ +$/.test(text) || text === '' ? ' ' : '';
  return `${fence}${pad}${text.replace(/\r\n|\n|\r/g, ' ')}${pad}${fence}`;
}

/** `text` as a fenced Markdown code block (newlines kept), whatever fences it holds. */
export function markdownCodeBlock(text: string): string {
  const fence = '`'.repeat(Math.max(3, longestRun(text, '`') + 1));
  return `${fence}text\n${text}\n${fence}`;
}

/**
 * The parts of a URL a person checks before letting a browser open it: the host (punycode as the
 * browser will use it) and whether it is plain http. Undefined for input that is no URL.
 */
export function urlFacts(raw: string): { readonly host: string; readonly insecure: boolean } | undefined {
  try {
    const url = new URL(raw);
    return { host: url.host, insecure: url.protocol === 'http:' };
  } catch {
    return undefined;
  }
}

function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}
