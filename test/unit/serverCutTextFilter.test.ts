// The external viewer's server-to-client filter against hand-built RFB streams: every encoding
// the gate lets a viewer ask for is framed in each pixel format, a pixel format change applies
// where the protocol says, and the screen's clipboard text (legacy, extended Notify and Provide)
// is cut out whole unless the viewer may receive it — for any split of the stream into chunks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { framedEncoding, RfbProtocolError } from '../../src/core/rfbServerStream';
import { ServerCutTextFilter, serverCutTextPasses } from '../../src/core/serverCutTextFilter';
import { EXTENDED_CLIPBOARD } from '../../src/core/rfbInputGate';

const u8 = (...bytes: number[]) => Buffer.from(bytes);
const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const s32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const cat = (...parts: Buffer[]) => Buffer.concat(parts);

function pixelFormat(bpp: number, depth: number, max: readonly number[] = [255, 255, 255]): Buffer {
  return cat(u8(bpp, depth, 0, 1), u16(max[0]), u16(max[1]), u16(max[2]), u8(16, 8, 0, 0, 0, 0));
}
function setPixelFormat(bpp: number, depth: number, max?: readonly number[]): Buffer {
  return cat(u8(0, 0, 0, 0), pixelFormat(bpp, depth, max));
}
const enableContinuous = (on: boolean) => cat(u8(150, on ? 1 : 0), u16(0), u16(0), u16(64), u16(32));
function rect(w: number, h: number, encoding: number, body: Buffer = Buffer.alloc(0)): Buffer {
  return cat(u16(0), u16(0), u16(w), u16(h), s32(encoding), body);
}
function update(...rects: Buffer[]): Buffer {
  return cat(u8(0, 0), u16(rects.length), ...rects);
}
function legacyCutText(text: string): Buffer {
  return cat(u8(3, 0, 0, 0), s32(text.length), Buffer.from(text, 'latin1'));
}
function extendedCutText(flags: number, payload: Buffer): Buffer {
  return cat(u8(3, 0, 0, 0), s32(-(4 + payload.length)), u32(flags), payload);
}

const hello = (version: string) => cat(Buffer.from(`RFB 003.00${version}\n`));
const serverInit = (bpp = 32, depth = 24) => cat(u16(64), u16(32), pixelFormat(bpp, depth), u32(4), Buffer.from('desk'));

/** Hextile: a raw tile, a tile with background, foreground and 2 plain subrects, one with 1 coloured subrect, an empty one (20×20 → 4 tiles). */
function hextile(pixel: number): Buffer {
  return cat(
    u8(1), Buffer.alloc(16 * 16 * pixel, 7),
    u8(2 | 4 | 8), Buffer.alloc(pixel, 1), Buffer.alloc(pixel, 2), u8(2), u8(0x00, 0x11, 0x22, 0x33),
    u8(8 | 16), u8(1), Buffer.alloc(pixel, 3), u8(0x01, 0x10),
    u8(0),
  );
}

/** One update with every framed encoding in a format of `pixel` bytes (`tpixel`: Tight's pixel size). */
function everyEncoding(pixel: number, tpixel: number): Buffer {
  return update(
    rect(2, 2, 0, Buffer.alloc(4 * pixel, 9)), // Raw
    rect(2, 2, 1, u8(0, 1, 0, 2)), // CopyRect
    rect(8, 8, 2, cat(u32(2), Buffer.alloc(pixel, 4), Buffer.alloc(2 * (pixel + 8), 5))), // RRE
    rect(20, 20, 5, hextile(pixel)),
    rect(4, 4, 7, cat(u8(0x80), Buffer.alloc(tpixel, 6))), // Tight fill
    rect(4, 4, 7, cat(u8(0x90), u8(0x85, 0x01), Buffer.alloc(133, 3))), // Tight JPEG, 2-byte length
    rect(1, 2, 7, cat(u8(0x00), Buffer.alloc(2 * tpixel, 8))), // Tight basic, < 12 bytes raw
    rect(16, 2, 7, cat(u8(0x40), u8(1), u8(1), Buffer.alloc(2 * tpixel, 1), Buffer.alloc(4, 2))), // Tight palette, 2 colours
    rect(16, 2, 7, cat(u8(0x50), u8(1), u8(3), Buffer.alloc(4 * tpixel, 1), u8(9), Buffer.alloc(9, 2))), // Tight palette, 4 colours: 32 bytes, zlib'd
    rect(64, 32, 7, cat(u8(0x60), u8(2), u8(0x81, 0x80, 0x01), Buffer.alloc(16385, 3))), // Tight gradient, 3-byte length
    rect(8, 8, 7, cat(u8(0x20), u8(20), Buffer.alloc(20, 4))), // Tight basic, stream 2, no filter byte
    rect(30, 30, 16, cat(u32(11), Buffer.alloc(11, 0xab))), // ZRLE
    rect(3, 3, -239, Buffer.alloc(9 * pixel + 3, 1)), // rich cursor
    rect(9, 2, -240, Buffer.alloc(6 + 2 * 2 * 2, 1)), // X cursor
    rect(0, 0, -240), // X cursor, empty
    rect(2, 2, -314, cat(s32(0), Buffer.alloc(16, 0xcc))), // cursor with alpha
    rect(2, 2, 0x574d5664, cat(u8(1, 0), Buffer.alloc(16, 0xdd))), // VMware alpha cursor
    rect(0, 0, -307, cat(u32(3), Buffer.from('abc'))), // desktop name
    rect(0, 0, -261, u8(7)), // LED state
    rect(0, 0, 0x574d5668, u32(7)), // VMware LED state
    rect(0, 0, -258), // QEMU extended key event ack
    rect(10, 10, 0x574d5666), // VMware cursor position
    rect(64, 32, -308, cat(u8(2, 0, 0, 0), Buffer.alloc(32, 0))), // extended desktop size, two screens
    rect(0, 0, -224), // LastRect
  );
}

const fence = cat(u8(248, 0, 0, 0), u32(0x80000000), u8(3), u8(1, 2, 3));
const xvp = u8(250, 0, 1, 1);
const colourMap = cat(u8(1, 0), u16(0), u16(2), Buffer.alloc(12, 0x44));
const caps = extendedCutText(EXTENDED_CLIPBOARD.caps | EXTENDED_CLIPBOARD.text | EXTENDED_CLIPBOARD.request | EXTENDED_CLIPBOARD.notify, u32(0));
const notify = extendedCutText(EXTENDED_CLIPBOARD.notify | EXTENDED_CLIPBOARD.text, Buffer.alloc(0));
const provide = extendedCutText(EXTENDED_CLIPBOARD.provide | EXTENDED_CLIPBOARD.text, Buffer.from('zlib-SECRET-2'));
const request = extendedCutText(EXTENDED_CLIPBOARD.request | EXTENDED_CLIPBOARD.text, Buffer.alloc(0));

/** Stream phases: server bytes, with the client messages the gate passes before the next phase. */
interface Phase {
  readonly server: Buffer;
  /** Kept from a viewer that may not receive the screen's clipboard. */
  readonly secret?: boolean;
  readonly client?: Buffer[];
}

function session(version: '3' | '7' | '8'): Phase[] {
  const security = version === '3' ? u32(1) : version === '7' ? u8(1, 1) : cat(u8(1, 1), u32(0));
  return [
    { server: hello('8') },
    { server: cat(security, serverInit(32, 24)) },
    { server: cat(everyEncoding(4, 3), u8(2), colourMap, fence, xvp) },
    { server: legacyCutText('SECRET-1'), secret: true },
    { server: caps },
    { server: notify, secret: true },
    { server: cat(request, u8(2)) },
    // 32 bits, depth 24, but not 8 bits a colour: Tight sends 4-byte pixels.
    { server: provide, secret: true, client: [setPixelFormat(32, 24, [31, 63, 31])] },
    // Request mode: a new format applies at once.
    { server: everyEncoding(4, 4), client: [setPixelFormat(16, 16)] },
    { server: everyEncoding(2, 2), client: [enableContinuous(true)] },
    // Continuous updates: as TigerVNC's viewer changes format (off, format, on), 16-bit updates
    // until the server's EndOfContinuousUpdates, 8-bit after.
    { server: everyEncoding(2, 2), client: [enableContinuous(false), setPixelFormat(8, 8), enableContinuous(true)] },
    { server: cat(everyEncoding(2, 2), u8(150), everyEncoding(1, 1)) },
    { server: legacyCutText('SECRET-3'), secret: true },
    // Off, then a format after the server's EndOfContinuousUpdates: it applies at once.
    { server: update(rect(1, 1, 0, u8(5))), client: [enableContinuous(false)] },
    { server: u8(150), client: [setPixelFormat(32, 24)] },
    { server: everyEncoding(4, 3), client: [enableContinuous(true), enableContinuous(false), setPixelFormat(16, 16)] },
    // Off, and a format before the server's EndOfContinuousUpdates: the update before it is still 32-bit.
    { server: cat(everyEncoding(4, 3), u8(150), everyEncoding(2, 2)) },
  ];
}

const versions = { '3': 3.3, '7': 3.7, '8': 3.8 } as const;

/** Runs the phases through a filter in chunks of the given sizes (cycled); the concatenated output. */
function run(version: '3' | '7' | '8', mayReceive: boolean, sizes: readonly number[]): { out: Buffer; dropped: number } {
  const filter = new ServerCutTextFilter({ clientVersion: () => versions[version], mayReceive: () => mayReceive });
  const out: Uint8Array[] = [];
  let k = 0;
  for (const phase of session(version)) {
    for (let at = 0; at < phase.server.length; ) {
      const size = Math.max(1, sizes[k++ % sizes.length]);
      out.push(...filter.push(phase.server.subarray(at, at + size)));
      at += size;
    }
    for (const message of phase.client ?? []) {
      filter.clientMessage(message);
    }
  }
  return { out: Buffer.concat(out), dropped: filter.dropped };
}

function expected(version: '3' | '7' | '8', mayReceive: boolean): Buffer {
  return Buffer.concat(session(version).filter((p) => mayReceive || !p.secret).map((p) => p.server));
}

const splits: readonly (readonly number[])[] = [[1 << 20], [1], [2, 3, 5, 7], [13], [64, 1, 1]];

describe('ServerCutTextFilter', () => {
  for (const version of ['3', '7', '8'] as const) {
    test(`3.${version}: a viewer in control gets the stream byte for byte, for any chunking`, () => {
      for (const sizes of splits) {
        const { out, dropped } = run(version, true, sizes);
        assert.deepEqual(out, expected(version, true), `chunks ${sizes.join(',')}`);
        assert.equal(dropped, 0);
      }
    });
    test(`3.${version}: a viewer not in control gets everything but the clipboard text, for any chunking`, () => {
      for (const sizes of splits) {
        const { out, dropped } = run(version, false, sizes);
        assert.deepEqual(out, expected(version, false), `chunks ${sizes.join(',')}`);
        assert.equal(dropped, 4);
        assert.ok(!out.includes('SECRET'));
      }
    });
  }

  test('random chunkings keep the output the same', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 40) + 1;
    for (let round = 0; round < 50; round++) {
      const sizes = Array.from({ length: 17 }, random);
      assert.deepEqual(run('8', false, sizes).out, expected('8', false));
    }
  });

  test('the decision is taken per message, when its header arrives', () => {
    let allowed = false;
    const filter = new ServerCutTextFilter({ clientVersion: () => 3.8, mayReceive: () => allowed });
    filter.push(cat(hello('8'), u8(1, 1), u32(0), serverInit()));
    const first = legacyCutText('one');
    // Control arrives while the first message streams: it stays dropped; the next one passes.
    const part1 = filter.push(first.subarray(0, 9));
    allowed = true;
    const part2 = filter.push(cat(first.subarray(9), legacyCutText('two')));
    assert.deepEqual(Buffer.concat([...part1, ...part2]), legacyCutText('two'));
  });

  test('a stream it cannot follow is an error, not passed on', () => {
    const filter = new ServerCutTextFilter({ clientVersion: () => 3.8, mayReceive: () => false });
    filter.push(cat(hello('8'), u8(1, 1), u32(0), serverInit()));
    assert.throws(() => filter.push(update(rect(2, 2, 4 /* CoRRE, never asked */, Buffer.alloc(8)))), RfbProtocolError);
    // The version is asked only when the server goes on after its banner (the viewer answered by then).
    let answered: 3.8 | undefined;
    const early = new ServerCutTextFilter({ clientVersion: () => answered, mayReceive: () => false });
    assert.deepEqual(Buffer.concat(early.push(hello('8'))), hello('8'));
    assert.throws(() => early.push(u8(1, 1)), /before the viewer chose/);
    const onTime = new ServerCutTextFilter({ clientVersion: () => answered, mayReceive: () => false });
    onTime.push(hello('8'));
    answered = 3.8;
    assert.doesNotThrow(() => onTime.push(cat(u8(1, 1), u32(0), serverInit())));
  });

  test('a refusal ends the session with its reason passed on; anything after it is an error, not passed', () => {
    const filter = new ServerCutTextFilter({ clientVersion: () => 3.8, mayReceive: () => false });
    const refusal = cat(hello('8'), u8(0), u32(4), Buffer.from('full'));
    assert.deepEqual(Buffer.concat(filter.push(refusal)), refusal);
    assert.throws(() => filter.push(legacyCutText('SECRET')), /after it ended/);
    const sameChunk = new ServerCutTextFilter({ clientVersion: () => 3.8, mayReceive: () => false });
    assert.throws(() => sameChunk.push(cat(refusal, legacyCutText('SECRET'))), /after it ended/);
  });

  test('the session speaks the lower version: a 3.3 server with a 3.8 viewer', () => {
    const filter = new ServerCutTextFilter({ clientVersion: () => 3.8, mayReceive: () => false });
    const stream = cat(hello('3'), u32(1), serverInit(), update(rect(1, 1, 0, Buffer.alloc(4))), legacyCutText('SECRET'));
    assert.deepEqual(Buffer.concat(filter.push(stream)), stream.subarray(0, stream.length - legacyCutText('SECRET').length));
  });

  test('a pixel format it cannot frame, sent by the viewer, fails the next push (the owner closes there)', () => {
    const filter = new ServerCutTextFilter({ clientVersion: () => 3.8, mayReceive: () => false });
    filter.push(cat(hello('8'), u8(1, 1), u32(0), serverInit()));
    assert.doesNotThrow(() => filter.clientMessage(setPixelFormat(24, 24)));
    assert.throws(() => filter.push(update()), /24 bits per pixel/);
  });

  test('extended clipboard actions: caps, request and peek pass; notify and provide only when allowed', () => {
    const no = () => false;
    const yes = () => true;
    assert.equal(serverCutTextPasses(EXTENDED_CLIPBOARD.caps | 1, no), true);
    assert.equal(serverCutTextPasses(EXTENDED_CLIPBOARD.request | 1, no), true);
    assert.equal(serverCutTextPasses(EXTENDED_CLIPBOARD.peek, no), true);
    assert.equal(serverCutTextPasses(EXTENDED_CLIPBOARD.notify | 1, no), false);
    assert.equal(serverCutTextPasses(EXTENDED_CLIPBOARD.provide | 1, no), false);
    assert.equal(serverCutTextPasses(EXTENDED_CLIPBOARD.provide | 1, yes), true);
    assert.equal(serverCutTextPasses(undefined, no), false);
    assert.equal(serverCutTextPasses(undefined, yes), true);
    assert.equal(serverCutTextPasses(EXTENDED_CLIPBOARD.provide | EXTENDED_CLIPBOARD.notify, yes), false);
  });

  test('the encodings a viewer may keep are the framed ones', () => {
    for (const kept of [0, 1, 2, 5, 7, 16, -223, -224, -239, -240, -258, -261, -307, -308, -312, -313, -314, -26, -254, -500, -765]) {
      assert.ok(framedEncoding(kept), `${kept}`);
    }
    for (const removed of [4, 6, 15, 21, 50, -232, -260, -316, -1000, 0x574d5690]) {
      assert.ok(!framedEncoding(removed), `${removed}`);
    }
  });
});
