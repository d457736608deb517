import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { before, test } from 'node:test';
import { toScreenVerdict } from '../../src/core/clipboardText';
import { framedEncoding } from '../../src/core/rfbServerStream';
import { DEFAULT_MAX_CLIPBOARD, MAX_HELD_KEYS, RfbInputGate, type ClipboardPolicy, type RfbInputGateOptions } from '../../src/core/rfbInputGate';

// ---------------------------------------------------------------------------------------------
// noVNC's own message encoders (RFB.messages from node_modules/@novnc/novnc/core/rfb.js), loaded
// under a few browser shims, so the corpus is made of exactly the bytes noVNC sends.

interface Recorder {
  sQpush8(v: number): void;
  sQpush16(v: number): void;
  sQpush32(v: number): void;
  sQpushString(s: string): void;
  sQpushBytes(b: ArrayLike<number>): void;
  flush(): void;
}

let noVnc: { messages: Record<string, (...args: any[]) => void>; prototype: Record<string, (...args: any[]) => void> };

async function loadNoVnc(): Promise<typeof noVnc> {
  const g = globalThis as any;
  const noop = () => undefined;
  g.window ??= g;
  g.navigator ??= { userAgent: 'node', platform: 'Linux', language: 'en' };
  g.addEventListener ??= noop;
  g.removeEventListener ??= noop;
  g.MutationObserver ??= class { observe() {} disconnect() {} };
  g.WebSocket ??= { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 };
  g.RTCDataChannel ??= g.WebSocket;
  g.document ??= {
    documentElement: {},
    createElement: () => ({ getContext: () => null, style: {}, appendChild: noop }),
    addEventListener: noop,
    removeEventListener: noop,
  };
  // noVNC is ESM with a top-level await: import it natively, out of esbuild's sight.
  const file = createRequire(__filename).resolve('@novnc/novnc') // exports core/rfb.js;
  const dynamicImport = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<any>;
  const originalError = console.error;
  const originalLog = console.log;
  console.error = noop; // its "scrollbar test" complains about the missing DOM
  console.log = noop;
  try {
    return (await dynamicImport(pathToFileURL(file).href)).default;
  } finally {
    console.error = originalError;
    console.log = originalLog;
  }
}

/** Runs one noVNC encoder against a recording socket; returns the message it flushed. */
function novnc(name: string, ...args: unknown[]): Uint8Array {
  const bytes: number[] = [];
  let flushes = 0;
  const sock: Recorder = {
    sQpush8: (v) => bytes.push(v & 0xff),
    sQpush16: (v) => bytes.push((v >> 8) & 0xff, v & 0xff),
    sQpush32: (v) => bytes.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff),
    sQpushString: (s) => {
      for (let i = 0; i < s.length; i++) bytes.push(s.charCodeAt(i) & 0xff);
    },
    sQpushBytes: (b) => {
      for (let i = 0; i < b.length; i++) bytes.push(b[i]);
    },
    flush: () => void flushes++,
  };
  noVnc.messages[name](sock, ...args);
  assert.equal(flushes, 1, `${name} is one message`);
  return Uint8Array.from(bytes);
}

/** The SetEncodings noVNC really sends (RFB.prototype._sendEncodings on a stand-in `this`). */
function novncEncodings(): Uint8Array {
  let message: Uint8Array | undefined;
  const fake = {
    _fbDepth: 24,
    _qualityLevel: 6,
    _compressionLevel: 2,
    _sock: {} as Recorder,
  };
  const bytes: number[] = [];
  fake._sock = {
    sQpush8: (v) => bytes.push(v & 0xff),
    sQpush16: (v) => bytes.push((v >> 8) & 0xff, v & 0xff),
    sQpush32: (v) => bytes.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff),
    sQpushString: () => assert.fail('unexpected'),
    sQpushBytes: () => assert.fail('unexpected'),
    flush: () => (message = Uint8Array.from(bytes)),
  };
  noVnc.prototype._sendEncodings.call(fake);
  return message!;
}

// ---------------------------------------------------------------------------------------------
// Streams with their expected output, computed while building (not by parsing).

const INPUT_TYPES = new Set([4, 5, 6, 251, 255]);

type Part =
  | { kind: 'raw'; bytes: Uint8Array; out: Uint8Array } // handshake bytes: out is what must pass
  | { kind: 'pass'; bytes: Uint8Array; out: Uint8Array } // non-input: always passes as `out`
  | { kind: 'input'; bytes: Uint8Array } // passes iff the next mayInput decision is true
  | { kind: 'oversize'; bytes: Uint8Array } // clipboard over the cap or of no known action: never passes, no decision
  | { kind: 'close'; bytes: Uint8Array; reason: RegExp }; // the stream is refused here

interface Case {
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly parts: readonly Part[];
  readonly options: RfbInputGateOptions;
}

class StreamBuilder {
  readonly parts: Part[] = [];
  constructor(
    readonly name: string,
    readonly options: RfbInputGateOptions = {},
  ) {}

  handshake(version: '3.3' | '3.7' | '3.8' = '3.8', shared = 0): this {
    const v = Buffer.from(`RFB 00${version[0]}.00${version[2]}\n`, 'latin1');
    this.parts.push({ kind: 'raw', bytes: v, out: v });
    if (version !== '3.3') {
      this.parts.push({ kind: 'raw', bytes: Uint8Array.of(1), out: Uint8Array.of(1) });
    }
    this.parts.push({ kind: 'raw', bytes: Uint8Array.of(shared), out: Uint8Array.of(1) });
    return this;
  }

  add(message: Uint8Array): this {
    const type = message[0];
    if (type === 2) {
      this.parts.push({ kind: 'pass', bytes: message, out: expectedEncodings(message) });
    } else if (type === 6 && clipboardLength(message) > (this.options.maxClipboard ?? DEFAULT_MAX_CLIPBOARD)) {
      this.parts.push({ kind: 'oversize', bytes: message });
    } else if (type === 6 && cutKind(message) === 'caps') {
      const out = Buffer.from(message);
      out.fill(0, 12); // the sizes: the server never pushes its clipboard unasked
      this.parts.push({ kind: 'pass', bytes: message, out });
    } else if (type === 6 && cutKind(message) === undefined) {
      this.parts.push({ kind: 'oversize', bytes: message });
    } else if (INPUT_TYPES.has(type)) {
      this.parts.push({ kind: 'input', bytes: message });
    } else {
      this.parts.push({ kind: 'pass', bytes: message, out: message });
    }
    return this;
  }

  refuse(bytes: Uint8Array, reason: RegExp): this {
    this.parts.push({ kind: 'close', bytes, reason });
    return this;
  }

  build(): Case {
    return { name: this.name, bytes: concat(this.parts.map((p) => p.bytes)), parts: this.parts, options: this.options };
  }
}

/** The clipboard rules, written out independently of the gate: which way a ClientCutText moves text. */
function cutKind(message: Uint8Array): 'caps' | 'toScreen' | 'fromScreen' | undefined {
  const m = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  if (m.readUInt32BE(4) < 0x80000000) return 'toScreen';
  const actions = m.readUInt32BE(8) >>> 24;
  if (actions & 0x01) return 'caps';
  return ({ 0x08: 'toScreen', 0x10: 'toScreen', 0x02: 'fromScreen', 0x04: 'fromScreen' } as const)[actions];
}

/** Whether a passing ClientCutText leaves this viewer's clipboard announced (true), withdrawn (false) or as it was. */
function announces(message: Uint8Array): boolean | undefined {
  const m = Buffer.from(message);
  if (m[0] !== 6 || m.readUInt32BE(4) < 0x80000000 || cutKind(m) !== 'toScreen') return undefined;
  return m.readUInt16BE(10) !== 0;
}

const WITHDRAW = Uint8Array.of(6, 0, 0, 0, 0xff, 0xff, 0xff, 0xfc, 0x08, 0, 0, 0);

function clipboardLength(message: Uint8Array): number {
  const raw = Buffer.from(message.buffer, message.byteOffset, message.byteLength).readUInt32BE(4);
  return raw >= 0x80000000 ? 0x100000000 - raw : raw;
}

/** The encodings list with each -316 replaced by the nearest earlier other entry (see the gate). */
function expectedEncodings(message: Uint8Array): Uint8Array {
  const buf = Buffer.from(message);
  const count = buf.readUInt16BE(2);
  const list = Array.from({ length: count }, (_, i) => buf.readInt32BE(4 + 4 * i));
  const others = list.filter((e) => e !== -316);
  let last: number | undefined;
  const rewritten = list.map((e) => {
    if (e !== -316) {
      last = e;
      return e;
    }
    return last ?? others[0] ?? 0;
  });
  const out = Buffer.alloc(message.length);
  buf.copy(out, 0, 0, 4);
  rewritten.forEach((e, i) => out.writeInt32BE(e, 4 + 4 * i));
  return out;
}

/** mayInput answers from a fixed script, by call number, so every run decides alike. */
function scripted(pattern: (call: number) => boolean) {
  let calls = 0;
  const mayInput = () => pattern(calls++);
  return { mayInput, calls: () => calls };
}

/**
 * What a viewer holds down on the server, from the input messages that reached it, and the
 * releases the gate owes when control ends: each held key's own message with down=0, the most
 * recently pressed first, then a PointerEvent with mask 0 where the pointer last was.
 */
class HeldModel {
  private readonly keys = new Map<string, Buffer>();
  private buttons = 0;
  private at = [0, 0];
  private announced = false;

  passed(message: Uint8Array): void {
    const m = Buffer.from(message);
    this.announced = announces(m) ?? this.announced;
    if (m[0] === 5) {
      this.buttons = m[1];
      this.at = [m.readUInt16BE(2), m.readUInt16BE(4)];
      return;
    }
    let id: string;
    let down: boolean;
    const up = Buffer.from(m);
    if (m[0] === 4) {
      id = `keysym ${m.readUInt32BE(4)}`;
      down = m[1] !== 0;
      up[1] = 0;
    } else if (m[0] === 255) {
      id = m.readUInt32BE(8) ? `keycode ${m.readUInt32BE(8)}` : `keysym ${m.readUInt32BE(4)}`;
      down = m.readUInt16BE(2) !== 0;
      up.writeUInt16BE(0, 2);
    } else {
      return;
    }
    this.keys.delete(id);
    if (down) this.keys.set(id, up);
  }

  releases(): Uint8Array[] {
    const out: Uint8Array[] = this.announced ? [WITHDRAW] : [];
    this.announced = false;
    out.push(...[...this.keys.values()].reverse());
    if (this.buttons !== 0) {
      const pointer = Buffer.alloc(6);
      pointer[0] = 5;
      pointer.writeUInt16BE(this.at[0], 2);
      pointer.writeUInt16BE(this.at[1], 4);
      out.push(pointer);
    }
    this.keys.clear();
    this.buttons = 0;
    return out;
  }
}

function expected(c: Case, pattern: (call: number) => boolean): { bytes: Buffer; close?: RegExp; calls: number } {
  const out: Uint8Array[] = [];
  const held = new HeldModel();
  let calls = 0;
  for (const part of c.parts) {
    switch (part.kind) {
      case 'raw':
      case 'pass':
        out.push(part.out);
        break;
      case 'input':
        if (pattern(calls++)) {
          const direction = part.bytes[0] === 6 ? cutKind(part.bytes) : undefined;
          if (direction === 'toScreen' || direction === 'fromScreen') {
            if (!(c.options.clipboard?.() ?? { toScreen: true, fromScreen: true })[direction]) break;
          }
          held.passed(part.bytes);
          out.push(part.bytes);
        } else {
          out.push(...held.releases()); // control ended: what it held is released before the drop
        }
        break;
      case 'oversize':
        break;
      case 'close':
        out.push(...held.releases());
        return { bytes: Buffer.concat(out), close: part.reason, calls };
    }
  }
  return { bytes: Buffer.concat(out), calls };
}

/** Feeds the pieces to a fresh gate; returns everything forwarded and the first close reason. */
function run(c: Case, pieces: Iterable<Uint8Array>, pattern: (call: number) => boolean) {
  const script = scripted(pattern);
  const gate = new RfbInputGate(script.mayInput, c.options);
  const out: Uint8Array[] = [];
  let close: string | undefined;
  for (const piece of pieces) {
    const result = gate.push(piece);
    if (close !== undefined) {
      assert.equal(result.forward.length, 0, 'nothing after a close');
      assert.equal(result.close, close, 'the close is sticky');
    }
    out.push(...result.forward);
    close ??= result.close;
  }
  return { bytes: Buffer.concat(out), close, calls: script.calls(), gate };
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of cuts) {
    pieces.push(bytes.slice(from, cut));
    from = cut;
  }
  pieces.push(bytes.slice(from));
  return pieces;
}

/** Deterministic PRNG (mulberry32). */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), bytes: (n: number) => Uint8Array.from({ length: n }, () => Math.floor(next() * 256)) };
}

/** Reads a post-handshake client stream whole (independently of the gate): the message types. */
function messageTypes(stream: Buffer, handshakeLength: number): number[] {
  const types: number[] = [];
  let at = handshakeLength;
  while (at < stream.length) {
    const type = stream[at];
    let length: number;
    switch (type) {
      case 0: length = 20; break;
      case 2: length = 4 + 4 * stream.readUInt16BE(at + 2); break;
      case 3: case 150: length = 10; break;
      case 4: length = 8; break;
      case 5: length = 6; break;
      case 6: { const raw = stream.readUInt32BE(at + 4); length = 8 + (raw >= 0x80000000 ? 0x100000000 - raw : raw); break; }
      case 248: length = 9 + stream[at + 8]; break;
      case 251: length = 8 + 16 * stream[at + 6]; break;
      case 255: length = 12; break;
      default: throw new Error(`unparseable output: type ${type} at ${at}`);
    }
    assert.ok(at + length <= stream.length, 'no message is cut short');
    types.push(type);
    at += length;
  }
  return types;
}

const PATTERNS: Record<string, (call: number) => boolean> = {
  always: () => true,
  never: () => false,
  alternating: (call) => call % 2 === 0,
  scripted: (call) => ((call * 2654435761) >>> 0) % 7 < 3,
};

// ---------------------------------------------------------------------------------------------
// The corpus.

const E = { caps: 1 << 24, request: 1 << 25, peek: 1 << 26, notify: 1 << 27, provide: 1 << 28, text: 1 };

function randomMessage(r: ReturnType<typeof prng>): Uint8Array {
  switch (r.int(16)) {
    case 0: return novnc('keyEvent', 0x20 + r.int(0x60), r.int(2));
    case 1: return novnc('QEMUExtendedKeyEvent', 0x20 + r.int(0x60), r.int(2) === 1, [0x1e, 0xe048, 0xe01d, 0x39][r.int(4)]);
    case 2: case 3: return novnc('pointerEvent', r.int(1280), r.int(800), r.int(0x80));
    case 4: return novnc('clientCutText', r.bytes(r.int(40)));
    case 5: return novnc('extendedClipboardNotify', [E.text]);
    case 6: return novnc('extendedClipboardRequest', [E.text]);
    case 7: return novnc('extendedClipboardProvide', [E.text], ['héllo\nworld ' + 'x'.repeat(r.int(200))]);
    case 8: return novnc('extendedClipboardCaps', [E.caps, E.request, E.peek, E.notify, E.provide], { 0: 10 * 1024 * 1024 });
    case 9: return novnc('setDesktopSize', 640 + r.int(1000), 480 + r.int(600), r.int(3), 0);
    case 10: return novnc('clientFence', r.int(4), String.fromCharCode(...r.bytes(r.int(65))));
    case 11: return novnc('enableContinuousUpdates', r.int(2) === 1, 0, 0, 1280, 800);
    case 12: return novnc('pixelFormat', [8, 16, 24][r.int(3)], true);
    case 13: return novnc('fbUpdateRequest', r.int(2) === 1, r.int(100), r.int(100), 1280, 800);
    case 14: return novnc('clientEncodings', [7, -316, 0, -223, -316, -1063131698].slice(r.int(3)));
    default: return novnc('keyEvent', 0xff0d, r.int(2));
  }
}

function setEncodings(list: number[]): Uint8Array {
  const b = Buffer.alloc(4 + 4 * list.length);
  b[0] = 2;
  b.writeUInt16BE(list.length, 2);
  list.forEach((e, i) => b.writeInt32BE(e, 4 + 4 * i));
  return b;
}

function fence(payloadLength: number): Uint8Array {
  const b = Buffer.alloc(9 + payloadLength, 0x5a);
  b.fill(0, 0, 9);
  b[0] = 248;
  b.writeUInt32BE(0x80000003, 4);
  b[8] = payloadLength;
  return b;
}

function desktopSize(screens: number): Uint8Array {
  const b = Buffer.alloc(8 + 16 * screens, 0x11);
  b[0] = 251;
  b[1] = 0;
  b.writeUInt16BE(1280, 2);
  b.writeUInt16BE(800, 4);
  b[6] = screens;
  b[7] = 0;
  return b;
}

function cutText(length: number, extended = false, fill = 0x41): Uint8Array {
  const b = Buffer.alloc(8 + length, fill);
  b.fill(0, 0, 8);
  b[0] = 6;
  b.writeUInt32BE(extended ? 0x100000000 - length : length, 4);
  return b;
}

function buildCorpus(): Case[] {
  const cases: Case[] = [];

  // what a real noVNC session sends first, then a burst of use
  const session = new StreamBuilder('a noVNC session').handshake('3.8', 0)
    .add(novnc('pixelFormat', 24, true))
    .add(novncEncodings())
    .add(novnc('fbUpdateRequest', false, 0, 0, 1280, 800))
    .add(novnc('clientFence', 0x3, 'fence payload'))
    .add(novnc('enableContinuousUpdates', true, 0, 0, 1280, 800))
    .add(novnc('extendedClipboardCaps', [E.caps, E.request, E.peek, E.notify, E.provide], { 0: 10 * 1024 * 1024 }));
  for (let i = 0; i < 20; i++) session.add(novnc('pointerEvent', 100 + i, 200 + i, i % 5 === 0 ? 1 : 0));
  for (const ch of 'echo ok') {
    session.add(novnc('QEMUExtendedKeyEvent', ch.charCodeAt(0), true, 0x1e)).add(novnc('QEMUExtendedKeyEvent', ch.charCodeAt(0), false, 0x1e));
  }
  session.add(novnc('keyEvent', 0xff0d, 1)).add(novnc('keyEvent', 0xff0d, 0))
    .add(novnc('extendedClipboardNotify', [E.text]))
    .add(novnc('extendedClipboardProvide', [E.text], ['pasted\r\ntext']))
    .add(novnc('clientCutText', Buffer.from('legacy clipboard', 'latin1')))
    .add(novnc('setDesktopSize', 1600, 900, 0, 0))
    .add(novnc('fbUpdateRequest', true, 0, 0, 1600, 900));
  cases.push(session.build());

  // random mixes of every message noVNC can send
  for (let seed = 1; seed <= 4; seed++) {
    const r = prng(seed);
    const b = new StreamBuilder(`random noVNC mix ${seed}`).handshake(['3.8', '3.7', '3.3'][seed % 3] as '3.8', seed % 2);
    for (let i = 0; i < 60; i++) b.add(randomMessage(r));
    cases.push(b.build());
  }

  // edge lengths, and clipboards around a small cap (skipped as they stream by)
  const edges = new StreamBuilder('edge lengths, cap 100', { maxClipboard: 100 }).handshake()
    .add(setEncodings([]))
    .add(setEncodings([-316, -316, 16, -316, 0]))
    .add(setEncodings([-316]))
    .add(fence(0)).add(fence(64)).add(fence(255))
    .add(desktopSize(0)).add(desktopSize(3))
    .add(cutText(0)).add(cutText(100)).add(cutText(101)).add(cutText(4, true)).add(cutText(100, true)).add(cutText(101, true))
    .add(cutText(1000, false, 6)) // a payload full of "type 6" bytes, skipped
    .add(novnc('keyEvent', 0x61, 1))
    .add(cutText(777, true, 0xff))
    .add(novnc('pointerEvent', 1, 2, 0x7f));
  cases.push(edges.build());
  // the same noVNC mixes under each narrower clipboard policy
  const policies: Record<string, ClipboardPolicy> = {
    toScreen: { toScreen: true, fromScreen: false },
    fromScreen: { toScreen: false, fromScreen: true },
    off: { toScreen: false, fromScreen: false },
  };
  for (const [name, policy] of Object.entries(policies)) {
    const r = prng(name.length * 7919);
    const b = new StreamBuilder(`random noVNC mix, clipboard ${name}`, { clipboard: () => policy }).handshake();
    for (let i = 0; i < 60; i++) b.add(randomMessage(r));
    cases.push(b.build());
  }
  cases.push(new StreamBuilder('many screens').handshake('3.7').add(novnc('fbUpdateRequest', false, 0, 0, 8, 8)).add(desktopSize(255)).add(novnc('keyEvent', 0x62, 0)).build());

  // refusals: what came before passes, nothing after
  const refusals: Array<[string, Uint8Array, RegExp]> = [
    ['unknown type 7', Uint8Array.of(7, 0, 0, 0), /unknown RFB client message type 7/],
    ['xvp (250)', novnc('xvpOp', 1, 2), /type 250/],
    ['QEMU subtype 1', Uint8Array.of(255, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), /QEMU client message subtype 1/],
    ['a too short extended clipboard', cutText(3, true), /invalid extended clipboard/],
  ];
  for (const [name, bad, reason] of refusals) {
    cases.push(new StreamBuilder(`refused: ${name}`).handshake()
      .add(novnc('pointerEvent', 9, 9, 0)).add(novnc('fbUpdateRequest', true, 0, 0, 10, 10))
      .refuse(concat([bad, novnc('keyEvent', 0x63, 1), novnc('fbUpdateRequest', true, 0, 0, 10, 10)]), reason)
      .build());
  }
  // noVNC's 7-byte PointerEvent (button 8): 6 bytes for the gate (and the server, -316 being
  // stripped), then a 1 that is no message type
  const extendedPointer = novnc('extendedPointerEvent', 5, 6, 1 << 7);
  cases.push(new StreamBuilder('refused: a 7-byte PointerEvent').handshake()
    .add(extendedPointer.subarray(0, 6))
    .refuse(concat([extendedPointer.subarray(6), novnc('keyEvent', 0x63, 1)]), /unknown RFB client message type 1$/)
    .build());
  cases.push(new StreamBuilder('refused: RFB 3.6').refuse(Buffer.from('RFB 003.006\n\x01\x01', 'latin1'), /protocol version/).build());
  const version = Buffer.from('RFB 003.008\n', 'latin1');
  const vncAuth = new StreamBuilder('refused: VNC authentication');
  vncAuth.parts.push({ kind: 'raw', bytes: version, out: version });
  cases.push(vncAuth.refuse(concat([Uint8Array.of(2), randomBytes(16)]), /security type 2/).build());
  return cases;
}

// ---------------------------------------------------------------------------------------------

let corpus: Case[];

before(async () => {
  noVnc = await loadNoVnc();
  corpus = buildCorpus();
});

test('noVNC encodes the lengths the gate assumes', () => {
  assert.equal(novnc('keyEvent', 0x61, 1).length, 8);
  assert.equal(novnc('QEMUExtendedKeyEvent', 0x61, true, 0x1e).length, 12);
  assert.equal(novnc('pointerEvent', 1, 2, 3).length, 6);
  assert.equal(novnc('extendedPointerEvent', 1, 2, 1 << 7).length, 7, 'only after the server confirms -316');
  assert.equal(novnc('clientCutText', Uint8Array.of(1, 2, 3)).length, 11);
  assert.equal(clipboardLength(novnc('extendedClipboardNotify', [E.text])), 4);
  assert.equal(novnc('extendedClipboardNotify', [E.text]).subarray(4, 8).join(), '255,255,255,252', 'length -4');
  assert.equal(novnc('setDesktopSize', 1, 1, 0, 0).length, 8 + 16);
  assert.equal(novnc('clientFence', 0, 'abc').length, 12);
  assert.equal(novnc('enableContinuousUpdates', true, 0, 0, 1, 1).length, 10);
  assert.equal(novnc('pixelFormat', 24, true).length, 20);
  assert.equal(novnc('fbUpdateRequest', true, 0, 0, 1, 1).length, 10);
  const encodings = Buffer.from(novncEncodings());
  const list = Array.from({ length: encodings.readUInt16BE(2) }, (_, i) => encodings.readInt32BE(4 + 4 * i));
  assert.ok(list.includes(-316), 'noVNC advertises ExtendedMouseButtons');
  assert.equal(encodings.length, 4 + 4 * list.length);
});

test('unfragmented: each corpus stream gives exactly the expected bytes for every lease pattern', () => {
  for (const c of corpus) {
    for (const [name, pattern] of Object.entries(PATTERNS)) {
      const want = expected(c, pattern);
      const got = run(c, [c.bytes], pattern);
      assert.ok(got.bytes.equals(want.bytes), `${c.name} / ${name}: forwarded bytes differ`);
      assert.equal(got.calls, want.calls, `${c.name} / ${name}: mayInput asked once per input message`);
      if (want.close) {
        assert.match(got.close ?? '', want.close, `${c.name}: close reason`);
      } else {
        assert.equal(got.close, undefined, `${c.name}: not closed`);
      }
    }
  }
});

test('a cut at every offset gives the same bytes as the whole stream', (t) => {
  let runs = 0;
  for (const c of corpus) {
    for (const pattern of [PATTERNS.alternating, PATTERNS.scripted]) {
      const whole = run(c, [c.bytes], pattern);
      for (let cut = 0; cut <= c.bytes.length; cut++) {
        const got = run(c, splitAt(c.bytes, [cut]), pattern);
        runs++;
        if (!got.bytes.equals(whole.bytes) || got.close !== whole.close) {
          assert.fail(`${c.name}: cut at ${cut} of ${c.bytes.length} differs`);
        }
      }
    }
  }
  assert.ok(runs > 10_000, `${runs} single cuts`);
  t.diagnostic(`${runs} single cuts over ${corpus.length} streams (${corpus.map((c) => c.bytes.length).join(', ')} bytes)`);
});

test('random multi-cut fragmentations give the same bytes as the whole stream', (t) => {
  const r = prng(0xb075);
  let runs = 0;
  for (const c of corpus) {
    const whole = run(c, [c.bytes], PATTERNS.scripted);
    const rounds = Math.max(150, Math.ceil(2400 / corpus.length));
    for (let k = 0; k < rounds; k++) {
      const n = c.bytes.length;
      const style = k % 4;
      let cuts: number[];
      if (style === 0) {
        cuts = Array.from({ length: n - 1 }, (_, i) => i + 1); // every byte alone
      } else {
        const count = style === 1 ? 1 + r.int(4) : style === 2 ? 1 + r.int(40) : 1 + r.int(Math.max(1, n >> 2));
        cuts = [...new Set(Array.from({ length: count }, () => r.int(n + 1)))].sort((a, b) => a - b);
      }
      const got = run(c, splitAt(c.bytes, cuts), PATTERNS.scripted);
      runs++;
      if (!got.bytes.equals(whole.bytes) || got.close !== whole.close) {
        assert.fail(`${c.name}: fragmentation ${JSON.stringify(cuts)} differs`);
      }
    }
  }
  assert.ok(runs >= 2000, `${runs} fragmentations`);
  t.diagnostic(`${runs} random fragmentations`);
});

test('without control no byte of any input message passes', () => {
  for (const c of corpus.filter((x) => !x.parts.some((p) => p.kind === 'close'))) {
    const handshake = c.parts.filter((p) => p.kind === 'raw').reduce((n, p) => n + p.bytes.length, 0);
    const r = prng(c.bytes.length);
    const cuts = [...new Set(Array.from({ length: 30 }, () => r.int(c.bytes.length)))].sort((a, b) => a - b);
    const denied = run(c, splitAt(c.bytes, cuts), PATTERNS.never);
    const types = messageTypes(denied.bytes, handshake);
    // A clipboard Caps answer (no text, its sizes zeroed) is the one ClientCutText that passes without control.
    const caps = c.parts.filter((p) => p.kind === 'pass' && p.bytes[0] === 6).length;
    assert.deepEqual(types.filter((t) => INPUT_TYPES.has(t) && t !== 6), [], `${c.name}: input passed without control`);
    assert.equal(types.filter((t) => t === 6).length, caps, `${c.name}: only clipboard Caps passed without control`);
    assert.ok(types.length > 0, `${c.name}: the viewer still gets its non-input messages through`);
    // and with control, every input message of the stream (under the cap, and the ways the policy allows) passes
    const allowed = messageTypes(run(c, [c.bytes], PATTERNS.always).bytes, handshake);
    const policy = c.options.clipboard?.() ?? { toScreen: true, fromScreen: true };
    const inputs = c.parts.filter((p) => {
      const direction = p.bytes[0] === 6 ? cutKind(p.bytes) : undefined;
      return p.kind === 'input' && !(direction !== undefined && direction !== 'caps' && !policy[direction]);
    }).length;
    assert.equal(allowed.filter((t) => INPUT_TYPES.has(t)).length, inputs + caps, `${c.name}: input passes with control`);
  }
});

test('the ClientInit shared flag is forced to 1', () => {
  for (const [version, handshake] of [['3.8', 'RFB 003.008\n\x01'], ['3.7', 'RFB 003.007\n\x01'], ['3.3', 'RFB 003.003\n']] as const) {
    const gate = new RfbInputGate(() => false);
    const out = Buffer.concat(gate.push(Buffer.from(handshake + '\x00', 'latin1')).forward);
    assert.equal(out.toString('latin1'), handshake + '\x01', version);
  }
});

test('the decision is taken when the message completes, not when it starts', () => {
  let allow = false;
  const gate = new RfbInputGate(() => allow);
  gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  const key = novnc('keyEvent', 0x61, 1);
  assert.deepEqual(gate.push(key.subarray(0, 3)).forward, []);
  allow = true;
  assert.deepEqual(Buffer.concat(gate.push(key.subarray(3)).forward), Buffer.from(key));
  assert.deepEqual(gate.push(key.subarray(0, 7)).forward, []);
  allow = false;
  assert.deepEqual(Buffer.concat(gate.push(key.subarray(7)).forward), Buffer.from(novnc('keyEvent', 0x61, 0)),
    'control lost before the last byte: dropped whole, only the release of the key it held goes out');
  const pointer = novnc('pointerEvent', 1, 1, 0);
  assert.deepEqual(gate.push(pointer).forward, []);
});

test('a mayInput that throws fails closed', () => {
  const gate = new RfbInputGate(() => {
    throw new Error('lease unreadable');
  });
  gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  assert.deepEqual(gate.push(novnc('keyEvent', 0x61, 1)).forward, []);
  assert.equal(Buffer.concat(gate.push(novnc('fbUpdateRequest', true, 0, 0, 1, 1)).forward).length, 10);
});

test('forwarded bytes are copies: the caller may reuse its chunk buffer', () => {
  const gate = new RfbInputGate(() => true);
  const chunk = Buffer.concat([Buffer.from('RFB 003.008\n\x01\x01', 'latin1'), novnc('keyEvent', 0x61, 1), setEncodings([1, -316])]);
  const copy = Buffer.from(chunk);
  const out = gate.push(chunk).forward;
  assert.equal(out.length, 1, 'coalesced into one array');
  chunk.fill(0);
  assert.deepEqual(Buffer.from(out[0]), Buffer.concat([copy.subarray(0, 22), setEncodings([1, 1])]));
});

test('a 10 MiB clipboard is dropped while buffering stays bounded, with or without control', () => {
  for (const extended of [false, true]) {
    for (const allow of [true, false]) {
      const before = novnc('keyEvent', 0x61, 1);
      const after = novnc('fbUpdateRequest', true, 0, 0, 1280, 800);
      const huge = cutText(10 * 1024 * 1024, extended, 0);
      randomBytes(huge.length - 8).copy(Buffer.from(huge.buffer, huge.byteOffset + 8));
      const stream = Buffer.concat([Buffer.from('RFB 003.008\n\x01\x00', 'latin1'), before, huge, after]);
      for (const chunkSize of [65536, 1000, 4093]) {
        let asked = 0;
        const gate = new RfbInputGate(() => (asked++, allow));
        const out: Uint8Array[] = [];
        let peak = 0;
        for (let at = 0; at < stream.length; at += chunkSize) {
          const result = gate.push(stream.subarray(at, at + chunkSize));
          assert.equal(result.close, undefined);
          out.push(...result.forward);
          peak = Math.max(peak, gate.bufferedBytes);
        }
        const want = Buffer.concat([Buffer.from('RFB 003.008\n\x01\x01', 'latin1'), ...(allow ? [before] : []), after]);
        assert.ok(Buffer.concat(out).equals(want), `extended=${extended} allow=${allow} chunk=${chunkSize}`);
        assert.equal(asked, 1, 'mayInput is not asked about a clipboard that cannot pass');
        assert.ok(peak <= 64, `buffered at most ${peak} bytes`);
        assert.equal(gate.bufferedBytes, 0);
      }
    }
  }
});

test('a clipboard at the cap passes whole and buffering never exceeds the cap plus its header', () => {
  for (const allow of [true, false]) {
    const clip = cutText(DEFAULT_MAX_CLIPBOARD, false, 0x42);
    const over = cutText(DEFAULT_MAX_CLIPBOARD + 1, true, 0x43);
    const stream = Buffer.concat([Buffer.from('RFB 003.008\n\x01\x00', 'latin1'), clip, over, novnc('keyEvent', 0x61, 0)]);
    const gate = new RfbInputGate(() => allow);
    const out: Uint8Array[] = [];
    let peak = 0;
    for (let at = 0; at < stream.length; at += 8191) {
      out.push(...gate.push(stream.subarray(at, at + 8191)).forward);
      peak = Math.max(peak, gate.bufferedBytes);
    }
    const got = Buffer.concat(out);
    assert.equal(got.length, allow ? 14 + clip.length + 8 : 14);
    assert.ok(peak <= DEFAULT_MAX_CLIPBOARD + 8, `peak ${peak}`);
  }
  assert.throws(() => new RfbInputGate(() => true, { maxClipboard: -1 }), RangeError);
});

test('ExtendedMouseButtons is neutralised in SetEncodings, keeping the length', () => {
  const cases: Array<[number[], number[]]> = [
    [[7, -316, 0], [7, 7, 0]],
    [[-316, -316, 16, -316], [16, 16, 16, 16]],
    [[-316, -316], [0, 0]],
    [[5, 6], [5, 6]],
    [[], []],
  ];
  for (const [list, want] of cases) {
    const gate = new RfbInputGate(() => true);
    gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
    const message = setEncodings(list);
    const out: Uint8Array[] = [];
    for (const byte of message) out.push(...gate.push(Uint8Array.of(byte)).forward); // byte by byte
    assert.deepEqual(Buffer.concat(out), Buffer.from(setEncodings(want)), JSON.stringify(list));
  }
  // noVNC's real list: the same length, the same order, no -316
  const real = novncEncodings();
  const gate = new RfbInputGate(() => true);
  gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  const out = Buffer.concat(gate.push(real).forward);
  assert.equal(out.length, real.length);
  assert.ok(out.equals(Buffer.from(expectedEncodings(real))));
  const list = Array.from({ length: out.readUInt16BE(2) }, (_, i) => out.readInt32BE(4 + 4 * i));
  assert.ok(!list.includes(-316));
});

test('keysym keyboard mode: QEMU extended key events (-258) are neutralised too, only when asked', () => {
  const real = novncEncodings();
  const listOf = (out: Buffer) => Array.from({ length: out.readUInt16BE(2) }, (_, i) => out.readInt32BE(4 + 4 * i));
  assert.ok(listOf(Buffer.from(real)).includes(-258), 'noVNC advertises QEMU extended key events');
  const plain = new RfbInputGate(() => true);
  plain.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  assert.ok(listOf(Buffer.concat(plain.push(real).forward)).includes(-258), 'kept by default');
  const keysym = new RfbInputGate(() => true, { neutralise: [-258] });
  keysym.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  const out: Uint8Array[] = [];
  for (const byte of real) out.push(...keysym.push(Uint8Array.of(byte)).forward);
  const list = listOf(Buffer.concat(out));
  assert.equal(Buffer.concat(out).length, real.length);
  assert.ok(!list.includes(-258) && !list.includes(-316), JSON.stringify(list));
});

test('the external viewer port keeps only encodings it can frame, and is told its version and framing messages', () => {
  const listOf = (out: Buffer) => Array.from({ length: out.readUInt16BE(2) }, (_, i) => out.readInt32BE(4 + 4 * i));
  const seen: number[] = [];
  const gate = new RfbInputGate(() => false, { keepEncoding: framedEncoding, observe: (m) => seen.push(m[0]) });
  assert.equal(gate.version, undefined);
  gate.push(Buffer.from('RFB 003.007\n\x01\x01', 'latin1'));
  assert.equal(gate.version, 3.7);
  // A TightVNC-like list: CoRRE (4) and PointerPos (-232) cannot be framed and go.
  const asked = [7, 5, 4, 2, 1, 0, -239, -240, -232, -223, -224, -26, 0xc0a1e5ce | 0];
  const out = Buffer.concat(gate.push(setEncodings(asked)).forward);
  assert.equal(out.length, 4 + 4 * asked.length, 'the count is kept');
  const list = listOf(out);
  assert.ok(!list.includes(4) && !list.includes(-232), JSON.stringify(list));
  assert.deepEqual([...new Set(list)].sort(), asked.filter(framedEncoding).sort());
  const pixelFormat = Uint8Array.of(0, 0, 0, 0, 16, 16, 0, 1, 0, 31, 0, 63, 0, 31, 11, 5, 0, 0, 0, 0);
  const continuousOff = Uint8Array.of(150, 0, 0, 0, 0, 0, 0, 8, 0, 8);
  gate.push(concat([pixelFormat, Uint8Array.of(3, 1, 0, 0, 0, 0, 0, 8, 0, 8), Uint8Array.of(5, 1, 0, 1, 0, 1), continuousOff]));
  assert.deepEqual(seen, [0, 3, 150], 'SetPixelFormat, the update request and continuous updates off, not the dropped PointerEvent');
});

test('SetDesktopSize passes only with control, and the gate remembers that one passed', () => {
  const allow = { value: false };
  const gate = new RfbInputGate(() => allow.value);
  gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  assert.equal(bytesOfOutput(gate.push(desktopSize(1))).length, 0, 'dropped without control');
  assert.equal(gate.resizedScreen, false);
  allow.value = true;
  assert.deepEqual(bytesOfOutput(gate.push(desktopSize(1))), Buffer.from(desktopSize(1)));
  assert.equal(gate.resizedScreen, true);
});

const bytesOfOutput = (output: { forward: Uint8Array[] }) => Buffer.concat(output.forward);

// ---------------------------------------------------------------------------------------------
// Keys and buttons are never left pressed when control ends.

const CONTROL_L = 0xffe3;
const SHIFT_L = 0xffe1;

/** A gate past the handshake whose lease answers from `allow`. */
function handshaken(allow: { value: boolean }): RfbInputGate {
  const gate = new RfbInputGate(() => allow.value);
  gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  return gate;
}

const bytesOf = (output: { forward: Uint8Array[] }) => Buffer.concat(output.forward);

/**
 * A model of what Xvnc holds down for one client, fed with the forwarded bytes (after the
 * handshake): keys by keysym or QEMU keycode, and the button mask. Independent of the gate.
 */
function serverState(stream: Buffer, handshakeLength: number): { keys: Set<string>; buttons: number } {
  const keys = new Set<string>();
  let buttons = 0;
  let at = handshakeLength;
  for (const type of messageTypes(stream, handshakeLength)) {
    const m = stream.subarray(at);
    if (type === 4) {
      const id = `keysym ${m.readUInt32BE(4)}`;
      if (m[1] !== 0) keys.add(id);
      else keys.delete(id);
    } else if (type === 255) {
      const id = m.readUInt32BE(8) ? `keycode ${m.readUInt32BE(8)}` : `keysym ${m.readUInt32BE(4)}`;
      if (m.readUInt16BE(2) !== 0) keys.add(id);
      else keys.delete(id);
    } else if (type === 5) {
      buttons = m[1];
    }
    at += { 0: 20, 3: 10, 150: 10, 4: 8, 5: 6, 255: 12 }[type] ?? messageLength(m);
  }
  return { keys, buttons };
}

function messageLength(m: Buffer): number {
  switch (m[0]) {
    case 2: return 4 + 4 * m.readUInt16BE(2);
    case 6: { const raw = m.readUInt32BE(4); return 8 + (raw >= 0x80000000 ? 0x100000000 - raw : raw); }
    case 248: return 9 + m[8];
    case 251: return 8 + 16 * m[6];
    default: throw new Error(`type ${m[0]}`);
  }
}

test('release(): the keys and buttons held under control are released, most recent key first, then the buttons', () => {
  const allow = { value: true };
  const gate = handshaken(allow);
  const pressed = [
    novnc('keyEvent', CONTROL_L, 1),
    novnc('QEMUExtendedKeyEvent', SHIFT_L, true, 0x2a),
    novnc('QEMUExtendedKeyEvent', 0x77, true, 0x11),
    novnc('pointerEvent', 300, 200, 0b101),
  ];
  assert.deepEqual(bytesOf(gate.push(Buffer.concat(pressed))), Buffer.concat(pressed), 'under control all of it passes');
  assert.deepEqual(gate.held, { keys: 3, buttons: 0b101 });
  allow.value = false;
  const released = bytesOf(gate.release());
  assert.deepEqual(released, Buffer.concat([
    novnc('QEMUExtendedKeyEvent', 0x77, false, 0x11),
    novnc('QEMUExtendedKeyEvent', SHIFT_L, false, 0x2a),
    novnc('keyEvent', CONTROL_L, 0),
    novnc('pointerEvent', 300, 200, 0),
  ]), 'noVNC\'s own release messages, at the last pointer position');
  assert.deepEqual(gate.held, { keys: 0, buttons: 0 });
  assert.deepEqual(gate.release().forward, [], 'released once: nothing is held any more');
  assert.deepEqual(gate.push(novnc('keyEvent', CONTROL_L, 0)).forward, [], 'the viewer\'s own late release is dropped (nothing held)');
  assert.deepEqual(gate.push(novnc('keyEvent', 0x61, 1)).forward, [], 'and without control nothing more passes');
});

test('only what is still held is released; nothing when nothing is held', () => {
  const allow = { value: true };
  const gate = handshaken(allow);
  assert.deepEqual(gate.release().forward, [], 'a fresh gate holds nothing');
  gate.push(Buffer.concat([
    novnc('keyEvent', 0x61, 1), novnc('keyEvent', 0x62, 1), novnc('keyEvent', 0x61, 0),
    novnc('keyEvent', 0x62, 1), // auto-repeat: still one key
    novnc('pointerEvent', 10, 20, 1), novnc('pointerEvent', 11, 21, 0), novnc('pointerEvent', 12, 22, 0),
  ]));
  assert.deepEqual(bytesOf(gate.release()), Buffer.from(novnc('keyEvent', 0x62, 0)), 'only b; the buttons are up already');
  // wheel clicks are press and release in one go: nothing to release afterwards
  gate.push(Buffer.concat([novnc('pointerEvent', 5, 5, 1 << 3), novnc('pointerEvent', 5, 5, 0)]));
  assert.deepEqual(gate.release().forward, []);
});

test('the first input dropped for want of control releases what the viewer held, then drops', () => {
  const allow = { value: true };
  const gate = handshaken(allow);
  gate.push(Buffer.concat([novnc('keyEvent', CONTROL_L, 1), novnc('pointerEvent', 40, 50, 1)]));
  allow.value = false; // control changed hands, and the owner has not called release() yet
  assert.deepEqual(bytesOf(gate.push(novnc('keyEvent', 0x77, 1))), Buffer.concat([novnc('keyEvent', CONTROL_L, 0), novnc('pointerEvent', 40, 50, 0)]));
  assert.deepEqual(gate.push(novnc('pointerEvent', 41, 51, 1)).forward, []);
  assert.deepEqual(gate.release().forward, []);
});

test('release() during a streamed SetEncodings waits for its end, so no message is ever cut', () => {
  const allow = { value: true };
  const gate = handshaken(allow);
  gate.push(novnc('keyEvent', CONTROL_L, 1));
  const encodings = setEncodings([7, -316, 0, 16]);
  const first = bytesOf(gate.push(encodings.subarray(0, 9)));
  allow.value = false;
  assert.deepEqual(gate.release().forward, [], 'not inside the encodings list');
  const rest = bytesOf(gate.push(encodings.subarray(9)));
  assert.deepEqual(Buffer.concat([first, rest]), Buffer.concat([Buffer.from(setEncodings([7, 7, 0, 16])), Buffer.from(novnc('keyEvent', CONTROL_L, 0))]));
  assert.deepEqual(gate.release().forward, []);
});

test('a stream refused for a bad message releases what it held before it closes', () => {
  const gate = handshaken({ value: true });
  gate.push(Buffer.concat([novnc('keyEvent', SHIFT_L, 1), novnc('pointerEvent', 7, 8, 4)]));
  const result = gate.push(Uint8Array.of(7, 0, 0, 0));
  assert.match(result.close ?? '', /unknown RFB client message type 7/);
  assert.deepEqual(bytesOf(result), Buffer.concat([novnc('keyEvent', SHIFT_L, 0), novnc('pointerEvent', 7, 8, 0)]));
  assert.deepEqual(gate.release(), { forward: [], close: result.close }, 'closed: nothing more');
});

test(`at most ${MAX_HELD_KEYS} keys are held: a press beyond that is dropped, and every held key is released`, () => {
  const gate = handshaken({ value: true });
  const presses = Array.from({ length: MAX_HELD_KEYS + 50 }, (_, i) => novnc('keyEvent', 0x10000 + i, 1));
  const passed = bytesOf(gate.push(Buffer.concat(presses)));
  assert.equal(passed.length, 8 * MAX_HELD_KEYS);
  assert.deepEqual(gate.push(novnc('keyEvent', 0x10000, 1)).forward.length, 1, 'a key already held repeats');
  assert.deepEqual(bytesOf(gate.push(novnc('keyEvent', 0x10000, 0))), Buffer.from(novnc('keyEvent', 0x10000, 0)));
  assert.equal(bytesOf(gate.push(novnc('keyEvent', 0x20000, 1))).length, 8, 'room again after a release');
  const released = bytesOf(gate.release());
  assert.equal(released.length, 8 * MAX_HELD_KEYS);
  const state = serverState(Buffer.concat([Buffer.from('RFB 003.008\n\x01\x01', 'latin1'), passed, Buffer.from(novnc('keyEvent', 0x10000, 0)), Buffer.from(novnc('keyEvent', 0x20000, 1)), released]), 14);
  assert.equal(state.keys.size, 0);
});

test('random sessions: after control ends, the server holds no key and no button, for any fragmentation', (t) => {
  const r = prng(0x6b657973);
  let checks = 0;
  let holding = 0;
  for (let round = 0; round < 300; round++) {
    const messages: Uint8Array[] = [];
    for (let i = 0; i < 40; i++) messages.push(randomMessage(r));
    const stream = Buffer.concat([Buffer.from('RFB 003.008\n\x01\x00', 'latin1'), ...messages]);
    const allow = { value: true };
    const gate = new RfbInputGate(() => allow.value);
    const out: Uint8Array[] = [];
    const endAt = 14 + r.int(stream.length - 14); // control ends somewhere in the stream, maybe mid-message
    for (let at = 0; at < stream.length; ) {
      const next = Math.min(stream.length, at + 1 + r.int(64), at < endAt ? endAt : Infinity);
      out.push(...gate.push(stream.subarray(at, next)).forward);
      at = next;
      if (at === endAt) {
        holding += gate.held.keys + gate.held.buttons > 0 ? 1 : 0;
        allow.value = false;
        out.push(...gate.release().forward);
      }
    }
    out.push(...gate.release().forward); // a release still pending (inside SetEncodings) is out by now
    const state = serverState(Buffer.concat(out), 14);
    assert.deepEqual([state.keys.size, state.buttons], [0, 0], `round ${round}: nothing stays pressed`);
    checks++;
  }
  assert.ok(holding > 100, `control ended while something was held in ${holding} sessions`);
  t.diagnostic(`${checks} random sessions, ${holding} ending while keys or buttons were held`);
});

// ---------------------------------------------------------------------------------------------
// Clipboard: which way text moves, only under control, only as the policy allows.

const POLICIES: Record<string, ClipboardPolicy> = {
  both: { toScreen: true, fromScreen: true },
  toScreen: { toScreen: true, fromScreen: false },
  fromScreen: { toScreen: false, fromScreen: true },
  off: { toScreen: false, fromScreen: false },
};

test('clipboard: each ClientCutText passes only under control and only the ways the policy allows', () => {
  const messages: Array<[string, Uint8Array, 'toScreen' | 'fromScreen']> = [
    ['legacy text', novnc('clientCutText', Buffer.from('hello', 'latin1')), 'toScreen'],
    ['extended Notify', novnc('extendedClipboardNotify', [E.text]), 'toScreen'],
    ['extended Provide', novnc('extendedClipboardProvide', [E.text], ['héllo 日本']), 'toScreen'],
    ['extended Request', novnc('extendedClipboardRequest', [E.text]), 'fromScreen'],
    ['extended Peek', cutText(4, true, 0).fill(0x04, 8, 9), 'fromScreen'],
  ];
  let checked = 0;
  for (const [policyName, policy] of Object.entries(POLICIES)) {
    for (const inControl of [true, false]) {
      for (const [name, message, direction] of messages) {
        let asked = 0;
        const gate = new RfbInputGate(() => (asked++, inControl), { clipboard: () => policy });
        gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
        const out = bytesOf(gate.push(message));
        const want = inControl && policy[direction];
        assert.deepEqual(out, want ? Buffer.from(message) : Buffer.alloc(0), `${name}, ${policyName}, in control ${inControl}`);
        assert.equal(asked, 1, `${name}: the lease is asked once`);
        assert.equal(gate.allowsClipboard(direction), want, `${name}: the host's question answers alike`);
        checked++;
      }
    }
  }
  assert.equal(checked, 40);
});

test('clipboard: a Caps passes always with its sizes zeroed, and tells that the server speaks UTF-8 clipboard', () => {
  for (const inControl of [true, false]) {
    let asked = 0;
    const gate = new RfbInputGate(() => (asked++, inControl), { clipboard: () => POLICIES.off });
    gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
    assert.equal(gate.extendedClipboard, false);
    const caps = novnc('extendedClipboardCaps', [E.caps, E.request, E.peek, E.notify, E.provide], { 0: 10 * 1024 * 1024 });
    assert.notDeepEqual(Buffer.from(caps.subarray(12)), Buffer.alloc(4), 'the corpus Caps claims a size');
    const out = bytesOf(gate.push(caps));
    assert.deepEqual(out.subarray(0, 12), Buffer.from(caps.subarray(0, 12)), 'header and flags unchanged');
    assert.deepEqual(out.subarray(12), Buffer.alloc(caps.length - 12), 'every size zeroed');
    assert.equal(asked, 0, 'no decision');
    assert.equal(gate.extendedClipboard, true);
  }
});

test('clipboard: an extended message of no known action, or of two, is dropped whole without asking', () => {
  for (const actions of [0, 0x20, 0x80, 0x0a, 0x12, 0x06]) {
    let asked = 0;
    const gate = new RfbInputGate(() => (asked++, true));
    gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
    const message = cutText(8, true, 0).fill(actions, 8, 9).fill(1, 11, 12);
    assert.deepEqual(gate.push(Buffer.concat([message, novnc('keyEvent', 0x61, 1)])).forward.map((b) => b.length), [8], `actions 0x${actions.toString(16)}`);
    assert.equal(asked, 1, 'only the key was asked about');
  }
});

test('clipboard: what this viewer announced to the screen is withdrawn when control ends, once', () => {
  const allow = { value: true };
  const gate = new RfbInputGate(() => allow.value);
  gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  assert.equal(bytesOf(gate.release()).length, 0, 'nothing announced, nothing to withdraw');
  gate.push(novnc('extendedClipboardNotify', [E.text]));
  assert.deepEqual(bytesOf(gate.release()), Buffer.from(WITHDRAW), 'a Notify of no formats');
  assert.equal(bytesOf(gate.release()).length, 0, 'once');
  // the viewer withdrew it itself: nothing more to do
  gate.push(novnc('extendedClipboardNotify', [E.text]));
  gate.push(novnc('extendedClipboardNotify', []));
  assert.equal(bytesOf(gate.release()).length, 0);
  // a Provide announces too; control lost before the next input: withdrawn before the drop
  gate.push(novnc('extendedClipboardProvide', [E.text], ['secret']));
  allow.value = false;
  assert.deepEqual(bytesOf(gate.push(novnc('keyEvent', 0x61, 1))), Buffer.from(WITHDRAW));
  // a legacy text cannot be withdrawn (the protocol has no way): nothing is made up
  allow.value = true;
  gate.push(novnc('clientCutText', Buffer.from('legacy', 'latin1')));
  assert.equal(bytesOf(gate.release()).length, 0);
});

test('clipboard: the host\'s question honours the cap, the lease and the policy, and fails closed', () => {
  let policy: ClipboardPolicy = POLICIES.both;
  let inControl = true;
  const gate = new RfbInputGate(() => inControl, { clipboard: () => policy });
  assert.equal(gate.allowsClipboard('toScreen', DEFAULT_MAX_CLIPBOARD), true);
  assert.equal(gate.allowsClipboard('toScreen', DEFAULT_MAX_CLIPBOARD + 1), false, 'over 256 KiB');
  assert.equal(gate.allowsClipboard('fromScreen', 300 * 1024), false, '300 KiB');
  policy = POLICIES.fromScreen;
  assert.deepEqual([gate.allowsClipboard('toScreen'), gate.allowsClipboard('fromScreen')], [false, true]);
  inControl = false;
  assert.deepEqual([gate.allowsClipboard('toScreen'), gate.allowsClipboard('fromScreen')], [false, false]);
  const throwing = new RfbInputGate(() => true, {
    clipboard: () => {
      throw new Error('setting unreadable');
    },
  });
  assert.equal(throwing.allowsClipboard('fromScreen'), false);
  throwing.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  assert.equal(bytesOf(throwing.push(novnc('extendedClipboardRequest', [E.text]))).length, 0);
});

test('clipboard to the screen: text the server cannot take is refused with its reason (the host words the note), and goes once it can', () => {
  let inControl = true;
  let policy: ClipboardPolicy = POLICIES.both;
  const gate = new RfbInputGate(() => inControl, { clipboard: () => policy });
  gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
  const utf8 = 'héllo 日本';

  // No extended clipboard yet (no Caps passed): legacy cut text, Latin-1 only.
  assert.equal(gate.extendedClipboard, false);
  assert.equal(toScreenVerdict(gate, 'hello'), 'send');
  assert.equal(toScreenVerdict(gate, 'héllo ÿ'), 'send', 'é and ÿ are Latin-1');
  assert.equal(toScreenVerdict(gate, utf8), 'notLatin1');
  assert.equal(toScreenVerdict(gate, 'price: 5 €'), 'notLatin1', '€ (U+20AC) is not Latin-1');
  assert.equal(toScreenVerdict(gate, '😀'), 'notLatin1', 'nor is a character outside the BMP');
  // The size is counted in UTF-8 bytes, up to the gate's cap and not one more.
  assert.equal(toScreenVerdict(gate, 'x'.repeat(DEFAULT_MAX_CLIPBOARD)), 'send');
  assert.equal(toScreenVerdict(gate, 'x'.repeat(DEFAULT_MAX_CLIPBOARD + 1)), 'tooLarge');
  assert.equal(toScreenVerdict(gate, 'é'.repeat(DEFAULT_MAX_CLIPBOARD / 2 + 1)), 'tooLarge', 'é is 2 bytes in UTF-8');
  assert.equal(toScreenVerdict(gate, 'x'.repeat(300 * 1024)), 'tooLarge', 'the issue\'s 300 KiB');

  // Without control, or with sharing off that way, nothing is said and nothing goes.
  inControl = false;
  assert.equal(toScreenVerdict(gate, 'hello'), 'notAllowed');
  assert.equal(toScreenVerdict(gate, utf8), 'notAllowed', 'no note about text that may not go anyway');
  inControl = true;
  policy = POLICIES.fromScreen;
  assert.equal(toScreenVerdict(gate, 'hello'), 'notAllowed');
  policy = POLICIES.both;
  assert.equal(toScreenVerdict(undefined, 'hello'), 'notAllowed', 'no session, no gate');

  // The viewer's Caps answer passes: the server speaks UTF-8 clipboard, and the text goes.
  gate.push(novnc('extendedClipboardCaps', [E.caps, E.request, E.peek, E.notify, E.provide], { 0: 10 * 1024 * 1024 }));
  assert.equal(gate.extendedClipboard, true);
  assert.equal(toScreenVerdict(gate, utf8), 'send');
  assert.equal(toScreenVerdict(gate, '😀'), 'send');
  assert.equal(toScreenVerdict(gate, 'é'.repeat(DEFAULT_MAX_CLIPBOARD / 2 + 1)), 'tooLarge', 'the cap holds with the extended clipboard too');
});
