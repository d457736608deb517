/**
 * Agent action input: the checks every field of a tool's raw input passes before anything runs.
 * Input comes from a model and is untrusted: types, integers, ranges, lengths and allowlists are
 * checked, and anything unexpected is an `ActionInputError` whose message tells the model what
 * was wrong and what is allowed. Pure, so every rule is unit-testable. How each action combines
 * these checks is in ./catalog.ts; key chords are checked in ./keys.ts.
 */

export const MAX_TEXT_LENGTH = 10_000;
export const MAX_URL_LENGTH = 8_192;
export const MAX_WAIT_SECONDS = 30;
export const MAX_SCROLL_AMOUNT = 50;

export type MouseButton = 'left' | 'middle' | 'right';
export type ScrollDirection = 'up' | 'down' | 'left' | 'right';

export interface Point {
  readonly x: number;
  readonly y: number;
}

/** Bad input from the agent. `message` is written for the agent: what was wrong and what is allowed. */
export class ActionInputError extends Error {
  readonly code = 'bad_input';

  constructor(message: string) {
    super(message);
    this.name = 'ActionInputError';
  }
}

const MOUSE_BUTTONS: readonly string[] = ['left', 'middle', 'right'] satisfies readonly MouseButton[];
const SCROLL_DIRECTIONS: readonly string[] = ['up', 'down', 'left', 'right'] satisfies readonly ScrollDirection[];

/** The raw input (or its field `name`) as an object; a tool's missing input is an empty one. */
export function record(raw: unknown, name = 'input'): Record<string, unknown> {
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

/** Refuses fields other than `allowed`: an ignored field would be a silent surprise to the model. */
export function only(input: Record<string, unknown>, allowed: readonly string[], prefix = ''): void {
  const extra = Object.keys(input).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    const where = prefix ? ` in ${prefix}` : '';
    const expected = allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'this tool takes no input';
    throw new ActionInputError(`unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => JSON.stringify(k)).join(', ')}${where} (${expected})`);
  }
}

export function point(input: Record<string, unknown>, xKey: string, yKey: string, prefix = ''): Point {
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

export function button(value: unknown): MouseButton {
  if (value === undefined) {
    return 'left';
  }
  if (typeof value === 'string' && MOUSE_BUTTONS.includes(value)) {
    return value as MouseButton;
  }
  throw new ActionInputError(`button must be "left", "middle" or "right", got ${describe(value)}`);
}

export function flag(value: unknown, name: string): boolean {
  if (value === undefined) {
    return false;
  }
  if (typeof value !== 'boolean') {
    throw new ActionInputError(`${name} must be true or false, got ${describe(value)}`);
  }
  return value;
}

export function direction(value: unknown): ScrollDirection {
  if (typeof value === 'string' && SCROLL_DIRECTIONS.includes(value)) {
    return value as ScrollDirection;
  }
  throw new ActionInputError(`direction must be "up", "down", "left" or "right", got ${describe(value)}`);
}

export function amount(value: unknown): number {
  if (value === undefined) {
    return 3;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_SCROLL_AMOUNT) {
    throw new ActionInputError(`amount must be a whole number of scroll steps from 1 to ${MAX_SCROLL_AMOUNT}, got ${describe(value)}`);
  }
  return value;
}

export function text(value: unknown): string {
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

export function seconds(value: unknown): number {
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

/** A value as the model sent it, short enough for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'number') {
    return Number.isNaN(value) ? 'NaN' : String(value);
  }
  if (value === undefined) {
    return 'nothing';
  }
  const json = JSON.stringify(value);
  return json === undefined ? typeof value : json.length > 60 ? `${json.slice(0, 57)}...` : json;
}
