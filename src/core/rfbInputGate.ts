/**
 * The RFB input gate: a stateful parser of the client-to-server RFB byte stream that sits between
 * a viewer (noVNC in a webview) and the relay to the sandbox's Xvnc. It lets a viewer watch at
 * all times, but lets its hands (keys, pointer, clipboard, desktop resize, QEMU keys) reach the
 * screen only while `mayInput()` says this viewer holds control.
 *
 * Rules:
 * - handshake: the 12-byte ProtocolVersion (3.3, 3.7 or 3.8), the 1-byte security type (3.7 and
 *   3.8 only; only None (1) is accepted: our Xvnc runs `-SecurityTypes None`), then ClientInit,
 *   whose shared flag is forced to 1 so a viewer can never disconnect the others;
 * - non-input messages always pass: 0 SetPixelFormat, 2 SetEncodings, 3 FramebufferUpdateRequest,
 *   150 EnableContinuousUpdates, 248 ClientFence;
 * - input messages pass whole if `mayInput()` is true when their last byte arrives, else they are
 *   dropped whole: 4 KeyEvent, 5 PointerEvent, 6 ClientCutText, 251 SetDesktopSize, 255/0 QEMU
 *   extended key event. `mayInput` is called exactly once per such message (a ClientCutText
 *   follows the clipboard rules below);
 * - a ClientCutText whose payload is larger than `maxClipboard` is dropped whatever the lease,
 *   skipped as it streams by (never buffered), and `mayInput` is not asked;
 * - a ClientCutText moves clipboard text in one direction (`cutTextDirection`): a legacy one, an
 *   extended Notify or Provide towards the screen, an extended Request or Peek from it. It passes
 *   only when `mayInput()` and the `clipboard()` policy for its direction both allow it; it is the
 *   one place that decides, and the host asks the same question (`allowsClipboard`) before it moves
 *   text between the screen and the user's clipboard. An extended message that is neither (no
 *   known action, or two) is dropped whole without asking;
 * - an extended clipboard Caps (the client's answer to the server's caps: no text in it) always
 *   passes, with every format's size zeroed: the server then never pushes its clipboard to this
 *   viewer unasked (TigerVNC sends text unsolicited only up to that size), it only announces it,
 *   and the text follows a Request, which passes only under control. A Caps that passed also
 *   tells that the server speaks the extended (UTF-8) clipboard (`extendedClipboard`);
 * - a clipboard this viewer announced to the screen (an extended Notify or Provide that passed)
 *   is withdrawn when it loses control: with the releases below goes a Notify of no formats, so
 *   the server forgets the text and the agent's next paste does not find the person's clipboard;
 * - the ExtendedMouseButtons pseudo-encoding (-316) is neutralised in SetEncodings (see
 *   `onEncoding`) so the server never switches PointerEvent to its 7-byte form, whose
 *   length only the server-to-client stream could tell us. Every PointerEvent is then 6 bytes for
 *   the gate and for every server alike. `neutralise` names more pseudo-encodings to drop the same
 *   way (the keyboard mode drops QEMU extended key events, -258: see src/keyboardMode.ts);
 *   `keepEncoding` drops every encoding it refuses the same way (the external viewer port keeps
 *   only what its server-to-client framing follows);
 * - anything else (an unknown message type or QEMU subtype, an unsupported protocol version or
 *   security type, an extended clipboard message shorter than its 4-byte flags) closes the
 *   stream: `close` carries the reason and nothing more is ever forwarded (the releases of
 *   what the viewer held go out just before it);
 * - keys and buttons are never left pressed when control ends: the gate remembers every key
 *   (KeyEvent by keysym, QEMU key event by keycode) and the pointer's button mask and position
 *   that passed, and when this viewer loses control it sends their releases itself (KeyEvent or
 *   QEMU key event with down=0 for each held key, most recent first, then a PointerEvent with
 *   mask 0 at the last position). That happens when the owner calls `release()` (control changed
 *   hands, the viewer closes), before the first input message dropped for want of control, and
 *   before a close. Releases go out between whole messages, never inside a streamed SetEncodings.
 *   No one else would send them: noVNC sends nothing once view-only, and Xvnc releases a client's
 *   keys when it disconnects but never its buttons. At most `MAX_HELD_KEYS` keys are held: a
 *   press beyond that is dropped, as a key the gate could not release must not go down.
 *
 * Decisions are taken per message, never per chunk: for any fragmentation of the same stream the
 * concatenated forwarded bytes (and the close reason) are the same. Memory held at any time is at
 * most max(maxClipboard + 8, 8 + 16 * 255) bytes plus a few constants (`bufferedBytes`), plus the
 * releases of at most `MAX_HELD_KEYS` held keys.
 */

export const DEFAULT_MAX_CLIPBOARD = 256 * 1024;

/** noVNC advertises it; the server then may switch PointerEvent to 7 bytes (see the header). */
export const PSEUDO_ENCODING_EXTENDED_MOUSE_BUTTONS = -316;
/** With it the client may send physical keys (QEMU extended key events), which Xvnc maps with its own layout. */
export const PSEUDO_ENCODING_QEMU_EXTENDED_KEY_EVENT = -258;

/** Client-to-server message types. */
export enum RfbClientMessage {
  SetPixelFormat = 0,
  SetEncodings = 2,
  FramebufferUpdateRequest = 3,
  KeyEvent = 4,
  PointerEvent = 5,
  ClientCutText = 6,
  EnableContinuousUpdates = 150,
  ClientFence = 248,
  SetDesktopSize = 251,
  QemuClientMessage = 255,
}

/** More keys than any keyboard can hold down at once (X has 248 keycodes). */
export const MAX_HELD_KEYS = 256;

/** Message types that are someone's hands on the screen. */
export const RFB_INPUT_TYPES: ReadonlySet<number> = new Set([4, 5, 6, 251, 255]);

export interface RfbInputGateOptions {
  /** Largest ClientCutText payload (bytes after the 8-byte header) that may pass. Default 256 KiB. */
  readonly maxClipboard?: number;
  /** Which ways clipboard text may move while this viewer holds control. Default: both. */
  readonly clipboard?: () => ClipboardPolicy;
  /** Pseudo-encodings to remove from SetEncodings besides ExtendedMouseButtons (always removed). */
  readonly neutralise?: readonly number[];
  /**
   * Encodings SetEncodings may keep (others are removed like the neutralised ones): the external
   * viewer port keeps what its server-to-client framing can follow (serverCutTextFilter.ts).
   */
  readonly keepEncoding?: (encoding: number) => boolean;
  /** Told each non-input message that passed (SetPixelFormat, FramebufferUpdateRequest, EnableContinuousUpdates, ClientFence). */
  readonly observe?: (message: Uint8Array) => void;
}

/** Which ways clipboard text may move (the user's `botScreen.clipboard` setting). */
export interface ClipboardPolicy {
  readonly toScreen: boolean;
  readonly fromScreen: boolean;
}

export type ClipboardDirection = keyof ClipboardPolicy;

/** Extended clipboard actions (the high byte of the flags) and the text format. */
export const EXTENDED_CLIPBOARD = {
  caps: 1 << 24,
  request: 1 << 25,
  peek: 1 << 26,
  notify: 1 << 27,
  provide: 1 << 28,
  text: 1,
} as const;

/**
 * Which way a whole ClientCutText moves clipboard text: `caps` for the capabilities answer (no
 * text), undefined for an extended message with no known action, or more than one.
 */
export function cutTextDirection(message: Uint8Array): ClipboardDirection | 'caps' | undefined {
  if (readU32(message, 4) < 0x80000000) {
    return 'toScreen'; // legacy: the client's Latin-1 text
  }
  switch (clipboardAction(readU32(message, 8))) {
    case 'caps':
      return 'caps';
    case 'notify':
    case 'provide':
      return 'toScreen';
    case 'request':
    case 'peek':
      return 'fromScreen';
    default:
      return undefined;
  }
}

export type ClipboardAction = 'caps' | 'request' | 'peek' | 'notify' | 'provide';

/**
 * The action of an extended clipboard message from its flags word (either side sends the same
 * five): `caps` whatever else is set, else the one action, undefined for none or more than one.
 */
export function clipboardAction(flags: number): ClipboardAction | undefined {
  const actions = (flags & 0xff000000) >>> 0;
  if (actions & EXTENDED_CLIPBOARD.caps) {
    return 'caps';
  }
  switch (actions) {
    case EXTENDED_CLIPBOARD.request:
      return 'request';
    case EXTENDED_CLIPBOARD.peek:
      return 'peek';
    case EXTENDED_CLIPBOARD.notify:
      return 'notify';
    case EXTENDED_CLIPBOARD.provide:
      return 'provide';
    default:
      return undefined;
  }
}

/** An extended Notify of no formats: "this client's clipboard is gone". */
const WITHDRAW_CLIPBOARD = Uint8Array.of(RfbClientMessage.ClientCutText, 0, 0, 0, 0xff, 0xff, 0xff, 0xfc, EXTENDED_CLIPBOARD.notify >>> 24, 0, 0, 0);

const BOTH_WAYS: ClipboardPolicy = { toScreen: true, fromScreen: true };

export interface RfbGateOutput {
  /** Bytes to write to the relay, in order (at most one array per push). */
  readonly forward: Uint8Array[];
  /** Set once the stream must be closed; sticky. Nothing is forwarded after the offending byte. */
  readonly close?: string;
}

type Phase = 'version' | 'security' | 'clientInit' | 'type' | 'header' | 'body' | 'skip' | 'encodings' | 'closed';

const VERSIONS: ReadonlyMap<string, 3.3 | 3.7 | 3.8> = new Map([
  ['RFB 003.003\n', 3.3],
  ['RFB 003.007\n', 3.7],
  ['RFB 003.008\n', 3.8],
]);

const SECURITY_NONE = 1;

/** Bytes needed before the total length of a message is known (type byte included). */
function headerBytes(type: number): number | undefined {
  switch (type) {
    case RfbClientMessage.SetPixelFormat:
    case RfbClientMessage.FramebufferUpdateRequest:
    case RfbClientMessage.KeyEvent:
    case RfbClientMessage.PointerEvent:
    case RfbClientMessage.EnableContinuousUpdates:
      return 1;
    case RfbClientMessage.QemuClientMessage:
      return 2; // subtype
    case RfbClientMessage.SetEncodings:
      return 4; // u16 number-of-encodings at offset 2
    case RfbClientMessage.ClientCutText:
    case RfbClientMessage.SetDesktopSize:
      return 8; // s32 length at offset 4 / u8 number-of-screens at offset 6
    case RfbClientMessage.ClientFence:
      return 9; // u8 payload length at offset 8
    default:
      return undefined;
  }
}

const FIXED_LENGTH: Readonly<Record<number, number>> = {
  [RfbClientMessage.SetPixelFormat]: 20,
  [RfbClientMessage.FramebufferUpdateRequest]: 10,
  [RfbClientMessage.KeyEvent]: 8,
  [RfbClientMessage.PointerEvent]: 6,
  [RfbClientMessage.EnableContinuousUpdates]: 10,
};

export class RfbInputGate {
  private readonly maxClipboard: number;
  private readonly clipboard: () => ClipboardPolicy;
  /** A Caps passed: the server speaks the extended clipboard. */
  private extended = false;
  /** An extended clipboard announcement of this viewer reached the screen and was not withdrawn. */
  private announced = false;
  private phase: Phase = 'version';
  /** Handshake bytes or the header of the current message. */
  private readonly head = new Uint8Array(12);
  private headLength = 0;
  private headNeed = 12;
  /** The current message while it is incomplete (allocated at its exact total length). */
  private message: Uint8Array | undefined;
  private messageLength = 0;
  private skipLeft = 0;
  /** SetEncodings streaming state. */
  private encodingsLeft = 0;
  private readonly entry = new Uint8Array(4);
  private entryLength = 0;
  private previousEncoding: number | undefined;
  private leadingExtendedMouse = 0;
  private closeReason: string | undefined;
  private out: Uint8Array[] = [];
  private outBytes = 0;
  /** Keys down on the server through this gate: identity to the message that releases it. */
  private readonly heldKeys = new Map<string, Uint8Array>();
  /** The button mask and position of the last PointerEvent that passed. */
  private buttons = 0;
  private pointerX = 0;
  private pointerY = 0;
  /** `release()` came while a SetEncodings was streaming: release when it ends. */
  private releasePending = false;
  private readonly neutralised: ReadonlySet<number>;
  private readonly keepEncoding: (encoding: number) => boolean;
  private readonly observe: ((message: Uint8Array) => void) | undefined;
  private desktopSizeChanged = false;
  private protocolVersion: 3.3 | 3.7 | 3.8 | undefined;

  constructor(
    private readonly mayInput: () => boolean,
    options: RfbInputGateOptions = {},
  ) {
    const max = options.maxClipboard ?? DEFAULT_MAX_CLIPBOARD;
    if (!Number.isSafeInteger(max) || max < 0 || max > 0x7fffffff) {
      throw new RangeError(`maxClipboard must be an integer from 0 to 2^31-1, got ${max}`);
    }
    this.maxClipboard = max;
    this.clipboard = options.clipboard ?? (() => BOTH_WAYS);
    this.neutralised = new Set([PSEUDO_ENCODING_EXTENDED_MOUSE_BUTTONS, ...(options.neutralise ?? [])]);
    this.keepEncoding = options.keepEncoding ?? (() => true);
    this.observe = options.observe;
  }

  /** The RFB version the viewer answered with, once it has (and it was one the gate accepts). */
  get version(): 3.3 | 3.7 | 3.8 | undefined {
    return this.protocolVersion;
  }

  /** True once a SetDesktopSize passed (the viewer in control resized the screen). */
  get resizedScreen(): boolean {
    return this.desktopSizeChanged;
  }

  /** True once the server has shown (through the viewer's Caps answer) that it speaks UTF-8 clipboard. */
  get extendedClipboard(): boolean {
    return this.extended;
  }

  /**
   * Whether clipboard text of `bytes` bytes (UTF-8) may move `direction` right now: this viewer
   * holds control, the policy allows that way, and it fits the cap. The host asks it before it
   * moves text; the gate applies the same rule to each ClientCutText.
   */
  allowsClipboard(direction: ClipboardDirection, bytes = 0): boolean {
    return bytes <= this.maxClipboard && this.askMayInput() && this.policyAllows(direction);
  }

  /** Bytes held while waiting for the rest of a message (the allocation, not just the fill). */
  get bufferedBytes(): number {
    return this.headLength + (this.message?.byteLength ?? 0) + this.entryLength;
  }

  /** The close reason once the stream has been refused. */
  get closed(): string | undefined {
    return this.closeReason;
  }

  /** Keys and buttons this viewer holds down on the server right now. */
  get held(): { readonly keys: number; readonly buttons: number } {
    return { keys: this.heldKeys.size, buttons: this.buttons };
  }

  /**
   * Control ended for this viewer (or it is closing): the releases of every key and button it
   * holds, to write to the server now, after everything `push` returned. Empty when nothing is
   * held or the stream was closed (releases went out before the close).
   */
  release(): RfbGateOutput {
    if (this.phase === 'encodings') {
      this.releasePending = true; // inside a streamed message: at its end
    } else if (this.phase !== 'closed') {
      this.emitReleases();
    }
    return this.flush();
  }

  push(chunk: Uint8Array): RfbGateOutput {
    if (this.phase === 'closed') {
      return { forward: [], close: this.closeReason };
    }
    let i = 0;
    const n = chunk.length;
    while (i < n && this.closeReason === undefined) {
      switch (this.phase) {
        case 'version': {
          i += this.fillHead(chunk, i);
          if (this.headLength === this.headNeed) {
            const text = String.fromCharCode(...this.head.subarray(0, 12));
            const version = VERSIONS.get(text);
            if (version === undefined) {
              this.fail(`unsupported RFB protocol version ${JSON.stringify(text)}`);
              break;
            }
            this.emit(this.head.slice(0, 12));
            this.protocolVersion = version;
            this.resetHead();
            this.phase = version === 3.3 ? 'clientInit' : 'security';
          }
          break;
        }
        case 'security': {
          const type = chunk[i++];
          if (type !== SECURITY_NONE) {
            this.fail(`unsupported RFB security type ${type} (only None)`);
            break;
          }
          this.emit(Uint8Array.of(type));
          this.phase = 'clientInit';
          break;
        }
        case 'clientInit': {
          i++;
          this.emit(Uint8Array.of(1)); // shared: never disconnect the other viewers
          this.phase = 'type';
          break;
        }
        case 'type': {
          const type = chunk[i++];
          const need = headerBytes(type);
          if (need === undefined) {
            this.fail(`unknown RFB client message type ${type}`);
            break;
          }
          this.head[0] = type;
          this.headLength = 1;
          this.headNeed = need;
          if (need === 1) {
            this.onHeader();
          } else {
            this.phase = 'header';
          }
          break;
        }
        case 'header': {
          i += this.fillHead(chunk, i);
          if (this.headLength === this.headNeed) {
            this.onHeader();
          }
          break;
        }
        case 'body': {
          const message = this.message!;
          const take = Math.min(message.length - this.messageLength, n - i);
          message.set(chunk.subarray(i, i + take), this.messageLength);
          this.messageLength += take;
          i += take;
          if (this.messageLength === message.length) {
            this.message = undefined;
            this.messageLength = 0;
            this.complete(message);
          }
          break;
        }
        case 'skip': {
          const take = Math.min(this.skipLeft, n - i);
          this.skipLeft -= take;
          i += take;
          if (this.skipLeft === 0) {
            this.phase = 'type';
          }
          break;
        }
        case 'encodings': {
          const take = Math.min(4 - this.entryLength, n - i);
          this.entry.set(chunk.subarray(i, i + take), this.entryLength);
          this.entryLength += take;
          i += take;
          if (this.entryLength === 4) {
            this.entryLength = 0;
            this.onEncoding(readS32(this.entry, 0));
          }
          break;
        }
      }
    }
    return this.flush();
  }

  private fillHead(chunk: Uint8Array, at: number): number {
    const take = Math.min(this.headNeed - this.headLength, chunk.length - at);
    this.head.set(chunk.subarray(at, at + take), this.headLength);
    this.headLength += take;
    return take;
  }

  private resetHead(): void {
    this.headLength = 0;
    this.headNeed = 0;
  }

  /** The header of the current message is complete: its total length is now known. */
  private onHeader(): void {
    const head = this.head;
    const type = head[0];
    let total: number;
    switch (type) {
      case RfbClientMessage.SetEncodings: {
        const count = (head[2] << 8) | head[3];
        this.emit(head.slice(0, 4));
        this.resetHead();
        if (count === 0) {
          this.phase = 'type';
        } else {
          this.encodingsLeft = count;
          this.previousEncoding = undefined;
          this.leadingExtendedMouse = 0;
          this.phase = 'encodings';
        }
        return;
      }
      case RfbClientMessage.ClientCutText: {
        const raw = readU32(head, 4);
        // A negative s32 length is the extended clipboard; |length| bytes follow either way.
        const length = raw >= 0x80000000 ? 0x100000000 - raw : raw;
        if (raw >= 0x80000000 && length < 4) {
          this.fail(`invalid extended clipboard message (length ${length})`);
          return;
        }
        if (length > this.maxClipboard) {
          this.resetHead();
          this.skipLeft = length;
          this.phase = 'skip';
          return;
        }
        total = 8 + length;
        break;
      }
      case RfbClientMessage.ClientFence:
        total = 9 + head[8];
        break;
      case RfbClientMessage.SetDesktopSize:
        total = 8 + 16 * head[6];
        break;
      case RfbClientMessage.QemuClientMessage:
        if (head[1] !== 0) {
          this.fail(`unknown QEMU client message subtype ${head[1]}`);
          return;
        }
        total = 12;
        break;
      default:
        total = FIXED_LENGTH[type];
    }
    const message = new Uint8Array(total);
    message.set(head.subarray(0, this.headLength));
    const have = this.headLength;
    this.resetHead();
    if (have === total) {
      this.complete(message);
    } else {
      this.message = message;
      this.messageLength = have;
      this.phase = 'body';
    }
  }

  private complete(message: Uint8Array): void {
    this.phase = 'type';
    if (message[0] === RfbClientMessage.ClientCutText) {
      this.completeCutText(message);
    } else if (!RFB_INPUT_TYPES.has(message[0])) {
      this.emit(message);
      this.observe?.(message);
    } else if (this.askMayInput()) {
      if (this.track(message)) {
        this.emit(message);
      }
    } else {
      this.emitReleases(); // control ended: let go of what this viewer held before dropping more
    }
  }

  private completeCutText(message: Uint8Array): void {
    const direction = cutTextDirection(message);
    if (direction === 'caps') {
      message.fill(0, 12); // every format's size: never push the screen's clipboard unasked
      this.extended = true;
      this.emit(message);
    } else if (direction === undefined) {
      return; // no known action: dropped whole
    } else if (!this.askMayInput()) {
      this.emitReleases();
    } else if (this.policyAllows(direction)) {
      if (direction === 'toScreen' && readU32(message, 4) >= 0x80000000) {
        this.announced = (message[10] | message[11]) !== 0; // a Notify of no formats withdraws
      }
      this.emit(message);
    }
  }

  private policyAllows(direction: ClipboardDirection): boolean {
    try {
      return this.clipboard()[direction] === true;
    } catch {
      return false; // fail closed
    }
  }

  /** Records what an input message presses or releases; false for a press that cannot be tracked. */
  private track(message: Uint8Array): boolean {
    let id: string;
    let down: boolean;
    switch (message[0]) {
      case RfbClientMessage.KeyEvent:
        id = `k${readU32(message, 4)}`;
        down = message[1] !== 0;
        break;
      case RfbClientMessage.QemuClientMessage: {
        // Xvnc presses the keycode when there is one, else the keysym (as a KeyEvent would).
        const keycode = readU32(message, 8);
        id = keycode !== 0 ? `q${keycode}` : `k${readU32(message, 4)}`;
        down = ((message[2] << 8) | message[3]) !== 0;
        break;
      }
      case RfbClientMessage.SetDesktopSize:
        this.desktopSizeChanged = true;
        return true;
      case RfbClientMessage.PointerEvent:
        this.buttons = message[1];
        this.pointerX = (message[2] << 8) | message[3];
        this.pointerY = (message[4] << 8) | message[5];
        return true;
      default:
        return true;
    }
    if (!down) {
      this.heldKeys.delete(id);
      return true;
    }
    if (!this.heldKeys.has(id) && this.heldKeys.size >= MAX_HELD_KEYS) {
      return false;
    }
    const up = message.slice();
    if (up[0] === RfbClientMessage.KeyEvent) {
      up[1] = 0;
    } else {
      up[2] = 0;
      up[3] = 0;
    }
    this.heldKeys.delete(id); // a repeat moves it to the end: the most recent is released first
    this.heldKeys.set(id, up);
    return true;
  }

  /** Emits the releases of everything held (most recent key first, then the buttons) and forgets it. */
  private emitReleases(): void {
    this.releasePending = false;
    if (this.announced) {
      this.announced = false;
      this.emit(WITHDRAW_CLIPBOARD.slice());
    }
    for (const up of [...this.heldKeys.values()].reverse()) {
      this.emit(up);
    }
    this.heldKeys.clear();
    if (this.buttons !== 0) {
      this.buttons = 0;
      this.emit(Uint8Array.of(RfbClientMessage.PointerEvent, 0, this.pointerX >> 8, this.pointerX & 0xff, this.pointerY >> 8, this.pointerY & 0xff));
    }
  }

  private askMayInput(): boolean {
    try {
      return this.mayInput() === true;
    } catch {
      return false; // fail closed
    }
  }

  /**
   * SetEncodings is streamed entry by entry (it can be 256 KiB long and always passes). Each
   * neutralised entry (ExtendedMouseButtons, and those of `neutralise`) is replaced, keeping the message length, by a copy of the nearest
   * preceding other entry (those before any other entry take the first other entry; a list of
   * nothing else becomes Raw, which every server supports): a repeated entry changes nothing for
   * a server, so the client's preferences stay as they were.
   */
  private onEncoding(encoding: number): void {
    if (this.neutralised.has(encoding) || !this.keepEncoding(encoding)) {
      if (this.previousEncoding === undefined) {
        this.leadingExtendedMouse++;
      } else {
        this.emit(s32Bytes(this.previousEncoding));
      }
    } else {
      for (let k = 0; k <= this.leadingExtendedMouse; k++) {
        this.emit(s32Bytes(encoding));
      }
      this.leadingExtendedMouse = 0;
      this.previousEncoding = encoding;
    }
    this.encodingsLeft--;
    if (this.encodingsLeft === 0) {
      for (let k = 0; k < this.leadingExtendedMouse; k++) {
        this.emit(s32Bytes(0)); // Raw
      }
      this.leadingExtendedMouse = 0;
      this.previousEncoding = undefined;
      this.phase = 'type';
      if (this.releasePending) {
        this.emitReleases();
      }
    }
  }

  private fail(reason: string): void {
    // Always between messages here (never inside a streamed one): the releases go out whole.
    this.emitReleases();
    this.closeReason = reason;
    this.phase = 'closed';
    this.message = undefined;
    this.messageLength = 0;
    this.resetHead();
    this.entryLength = 0;
  }

  private emit(bytes: Uint8Array): void {
    this.out.push(bytes);
    this.outBytes += bytes.length;
  }

  private flush(): RfbGateOutput {
    const pieces = this.out;
    const size = this.outBytes;
    this.out = [];
    this.outBytes = 0;
    let forward: Uint8Array[];
    if (pieces.length === 0) {
      forward = [];
    } else if (pieces.length === 1) {
      forward = pieces;
    } else {
      const joined = new Uint8Array(size);
      let at = 0;
      for (const piece of pieces) {
        joined.set(piece, at);
        at += piece.length;
      }
      forward = [joined];
    }
    return this.closeReason === undefined ? { forward } : { forward, close: this.closeReason };
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) >>> 0) + ((bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]);
}

function readS32(bytes: Uint8Array, at: number): number {
  return (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
}

function s32Bytes(value: number): Uint8Array {
  return Uint8Array.of((value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
}
