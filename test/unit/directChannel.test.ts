// The direct channel's server (src/core/directChannel.ts) against a raw TCP client that writes
// RFC 6455 frames by hand: the upgrade checks (token, origin, one use), masked and fragmented
// frames, control frames, and the pump that feeds it (src/core/pump.ts SocketPump).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import {
  DirectChannelServer, type DirectSocket, FrameDecoder, frameHeader, OP_BINARY, OP_CLOSE,
  OP_CONTINUATION, OP_PING, OP_PONG, OP_TEXT, ProtocolError,
} from '../../src/core/directChannel';
import { type MessageSink, SocketPump } from '../../src/core/pump';
import { parseVisibility, visibilityMessage } from '../../src/core/directProtocol';
import { clientFrame, dial, ORIGIN, serverFrames } from '../support/directClient';

const until = async (what: () => boolean, label: string) => {
  const start = Date.now();
  while (!what()) {
    assert.ok(Date.now() - start < 5000, `timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

async function withServer(run: (server: DirectChannelServer, port: number, refusals: string[]) => Promise<void>): Promise<void> {
  const refusals: string[] = [];
  const server = new DirectChannelServer((reason) => refusals.push(reason));
  try {
    await run(server, await server.start(), refusals);
  } finally {
    server.dispose();
  }
}

test('the server listens on 127.0.0.1 only, and plain HTTP gets nothing', async () => {
  await withServer(async (server, port) => {
    assert.ok(port > 0);
    const address = (server as unknown as { server: { address(): { address: string } } }).server.address();
    assert.equal(address.address, '127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(res.status, 404);
  });
});

test('the offered token and origin upgrade; binary both ways; masked fragmented input with a ping between fragments', async () => {
  await withServer(async (server, port) => {
    const accepted: DirectSocket[] = [];
    const messages: Buffer[] = [];
    const offer = server.offer(ORIGIN, (socket) => {
      socket.onMessage = (data) => messages.push(data);
      accepted.push(socket);
    });
    assert.match(offer.token, /^[0-9a-f]{64}$/, '256 random bits');
    // Behind a path-keeping forwarder the token is the last segment.
    const client = dial(port, `/proxy/${port}/${offer.token}`);
    assert.match(await client.response, /^HTTP\/1\.1 101/);
    await until(() => accepted.length === 1, 'the accept');

    // Server to client: one message of several chunks, small, 16-bit and 64-bit lengths.
    const big = randomBytes(70_000);
    accepted[0].send([Buffer.from('RFB '), Buffer.from('003.008\n')], 12);
    accepted[0].send([big.subarray(0, 1000), big.subarray(1000)], big.length);
    await until(() => client.received().length >= 14 + 10 + big.length, 'the server frames');
    const frames = serverFrames(client.received());
    assert.deepEqual(frames.map((f) => f.opcode), [OP_BINARY, OP_BINARY]);
    assert.equal(frames[0].payload.toString(), 'RFB 003.008\n');
    assert.deepEqual(frames[1].payload, big);

    // Client to server: a fragmented message with a ping between its fragments, written a byte at a time.
    const bytes = Buffer.concat([
      clientFrame(OP_BINARY, Buffer.from('key-'), false),
      clientFrame(OP_PING, Buffer.from('hi')),
      clientFrame(OP_CONTINUATION, Buffer.from('down'), false),
      clientFrame(OP_CONTINUATION, Buffer.alloc(300, 7), true),
      clientFrame(OP_BINARY, Buffer.from([1, 2, 3])),
    ]);
    for (const byte of bytes) {
      client.socket.write(Buffer.from([byte]));
    }
    await until(() => messages.length === 2, 'two messages');
    assert.deepEqual(messages[0], Buffer.concat([Buffer.from('key-down'), Buffer.alloc(300, 7)]));
    assert.deepEqual(messages[1], Buffer.from([1, 2, 3]));
    await until(() => serverFrames(client.received()).length === 3, 'the pong');
    const pong = serverFrames(client.received())[2];
    assert.equal(pong.opcode, OP_PONG);
    assert.equal(pong.payload.toString(), 'hi');

    // The client's close is answered with a close, and the server side is told.
    let closedWith = 0;
    accepted[0].onClose = (code) => (closedWith = code);
    client.socket.write(clientFrame(OP_CLOSE, Buffer.from([0x03, 0xe8])));
    await client.closed;
    assert.equal(closedWith, 1000);
    assert.equal(serverFrames(client.received()).at(-1)?.opcode, OP_CLOSE);
  });
});

test('a wrong token, a wrong origin, a used token and a revoked token are refused before the upgrade', async () => {
  await withServer(async (server, port, refusals) => {
    let accepts = 0;
    const offer = server.offer(ORIGIN, () => accepts++);
    const wrongToken = dial(port, `/${randomBytes(32).toString('hex')}`);
    assert.match(await wrongToken.response, /^HTTP\/1\.1 403/);
    const noToken = dial(port, '/');
    assert.match(await noToken.response, /^HTTP\/1\.1 400/);
    const otherOrigin = dial(port, `/${offer.token}`, { origin: 'http://evil.example' });
    assert.match(await otherOrigin.response, /^HTTP\/1\.1 403/);
    const noOrigin = dial(port, `/${offer.token}`, { origin: '' });
    assert.match(await noOrigin.response, /^HTTP\/1\.1 403/);
    const noSubprotocol = dial(port, `/${offer.token}`, { 'sec-websocket-protocol': '' });
    assert.match(await noSubprotocol.response, /^HTTP\/1\.1 400/, 'a client that does not ask for our subprotocol is not ours');
    // The token was not spent by the refused attempts: the webview still gets in, once.
    const first = dial(port, `/${offer.token}`);
    assert.match(await first.response, /^HTTP\/1\.1 101/);
    const second = dial(port, `/${offer.token}`);
    assert.match(await second.response, /^HTTP\/1\.1 403/, 'one connection per token');
    const revoked = server.offer(ORIGIN, () => accepts++);
    revoked.revoke();
    const late = dial(port, `/${revoked.token}`);
    assert.match(await late.response, /^HTTP\/1\.1 403/);
    assert.equal(accepts, 1);
    assert.deepEqual(refusals, ['unknownToken', 'badRequest', 'wrongOrigin', 'wrongOrigin', 'badRequest', 'unknownToken', 'unknownToken']);
    first.socket.destroy();
  });
});

test('acknowledgements are text frames of decimal digits; they reach onAck and never the RFB input', async () => {
  await withServer(async (server, port) => {
    const acks: number[] = [];
    const messages: Buffer[] = [];
    const offer = server.offer(ORIGIN, (socket) => {
      socket.onAck = (bytes) => acks.push(bytes);
      socket.onMessage = (data) => messages.push(data);
    });
    const client = dial(port, `/${offer.token}`);
    assert.match(await client.response, /^HTTP\/1\.1 101/);
    client.socket.write(Buffer.concat([
      clientFrame(OP_TEXT, Buffer.from('65536')),
      clientFrame(OP_BINARY, Buffer.from([4, 1])),
      clientFrame(OP_TEXT, Buffer.from('12')),
    ]));
    await until(() => acks.length === 2 && messages.length === 1, 'two acks and one message');
    assert.deepEqual(acks, [65536, 12]);
    assert.deepEqual(messages, [Buffer.from([4, 1])]);
    // Text that is not a count is not ours: the connection closes (1003), nothing is acknowledged.
    client.socket.write(clientFrame(OP_TEXT, Buffer.from('-5')));
    await client.closed;
    assert.equal(serverFrames(client.received()).at(-1)?.payload.readUInt16BE(0), 1003);
    assert.deepEqual(acks, [65536, 12]);
  });
});

test('the server\'s text messages, "shown <n>" and "hidden <n>", go out whole between binary messages', async () => {
  await withServer(async (server, port) => {
    const accepted: DirectSocket[] = [];
    const offer = server.offer(ORIGIN, (socket) => accepted.push(socket));
    const client = dial(port, `/${offer.token}`);
    assert.match(await client.response, /^HTTP\/1\.1 101/);
    await until(() => accepted.length === 1, 'the accept');
    accepted[0].send([Buffer.from([1, 2])], 2);
    accepted[0].sendText(visibilityMessage(true, 7));
    accepted[0].send([Buffer.from([3])], 1);
    accepted[0].sendText(visibilityMessage(false, 8));
    await until(() => serverFrames(client.received()).length === 4, 'four frames');
    const frames = serverFrames(client.received());
    assert.deepEqual(frames.map((f) => f.opcode), [OP_BINARY, OP_TEXT, OP_BINARY, OP_TEXT]);
    assert.deepEqual(parseVisibility(frames[1].payload.toString()), { shown: true, seq: 7 });
    assert.deepEqual(parseVisibility(frames[3].payload.toString()), { shown: false, seq: 8 });
    accepted[0].close();
    accepted[0].sendText(visibilityMessage(true, 9)); // closed: nothing more is written
    await client.closed;
    assert.equal(serverFrames(client.received()).at(-1)?.opcode, OP_CLOSE);
  });
});

test('a visibility message is "shown <n>" or "hidden <n>", nothing else', () => {
  assert.equal(visibilityMessage(true, 0), 'shown 0');
  assert.equal(visibilityMessage(false, 12), 'hidden 12');
  for (const text of ['shown', 'hidden', 'shown -1', 'shown 1 ', 'visible 1', '12', 'hidden 1x']) {
    assert.equal(parseVisibility(text), undefined, text);
  }
});

test('protocol errors close the connection with their code: unmasked frame 1002, text 1003, oversize 1009', async () => {
  await withServer(async (server, port) => {
    const cases: [Buffer, number][] = [
      [Buffer.concat([frameHeader(OP_BINARY, 3), Buffer.from([1, 2, 3])]), 1002],
      [clientFrame(OP_TEXT, Buffer.from('hello')), 1003],
      [clientFrame(OP_CONTINUATION, Buffer.from('x')), 1002],
    ];
    for (const [bytes, code] of cases) {
      const offer = server.offer(ORIGIN, () => undefined);
      const client = dial(port, `/${offer.token}`);
      assert.match(await client.response, /^HTTP\/1\.1 101/);
      client.socket.write(bytes);
      await client.closed;
      const last = serverFrames(client.received()).at(-1);
      assert.equal(last?.opcode, OP_CLOSE);
      assert.equal(last?.payload.readUInt16BE(0), code);
    }
    // A header announcing more than a viewer ever sends is refused before its payload arrives.
    const decoder = new FrameDecoder(1000);
    const header = frameHeader(OP_BINARY, 5000);
    header[1] |= 0x80;
    assert.throws(() => decoder.push(header), (err: unknown) => err instanceof ProtocolError && err.code === 1009);
  });
});

/** A sink that takes `room` messages before it reports full. */
function sink(room: number): MessageSink & { messages: Buffer[]; drain(): void } {
  let drainListener: (() => void) | undefined;
  const messages: Buffer[] = [];
  return {
    messages,
    send(chunks, length) {
      const message = Buffer.concat(chunks);
      assert.equal(message.length, length);
      messages.push(message);
      return messages.length < room;
    },
    onDrain(listener) {
      drainListener = listener;
    },
    drain() {
      room = Infinity;
      drainListener?.();
    },
  };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

test('the socket pump holds the first bytes until the socket is attached, then sends one message per turn', async () => {
  const source = new PassThrough();
  const pump = new SocketPump(source, undefined, Infinity);
  source.write(Buffer.from('RFB 003.008\n'));
  await tick();
  await tick();
  assert.ok(source.isPaused(), 'not read further before the webview dialled');
  const out = sink(100);
  pump.attach(out);
  await tick();
  assert.deepEqual(out.messages.map(String), ['RFB 003.008\n']);
  for (let i = 0; i < 5; i++) {
    source.write(Buffer.from([i]));
  }
  await tick();
  await tick();
  assert.deepEqual(out.messages.slice(1), [Buffer.from([0, 1, 2, 3, 4])], 'coalesced into one message');
});

test('the socket pump stops reading while the socket is full or the viewer hidden', async () => {
  const source = new PassThrough();
  const pump = new SocketPump(source, undefined, Infinity);
  const out = sink(1);
  pump.attach(out);
  source.write(Buffer.from('a'));
  await tick();
  await tick();
  assert.equal(out.messages.length, 1);
  assert.ok(source.isPaused(), 'paused while the socket buffer is full');
  source.write(Buffer.from('b'));
  await tick();
  assert.equal(out.messages.length, 1);
  out.drain();
  await tick();
  await tick();
  assert.deepEqual(out.messages.map(String), ['a', 'b']);
  pump.setVisible(false);
  source.write(Buffer.from('c'));
  await tick();
  await tick();
  assert.equal(out.messages.length, 2, 'nothing sent while hidden');
  assert.ok(source.isPaused());
  pump.setVisible(true);
  await tick();
  await tick();
  assert.deepEqual(out.messages.map(String), ['a', 'b', 'c']);
});

test('the socket pump keeps at most its window unacknowledged: a hidden or lagging webview gets no more', async () => {
  const source = new PassThrough();
  const pump = new SocketPump(source, 1000, Infinity);
  const out = sink(100);
  pump.attach(out);
  source.write(Buffer.alloc(600, 1));
  await tick();
  await tick();
  source.write(Buffer.alloc(600, 2));
  await tick();
  await tick();
  assert.equal(out.messages.length, 2, 'below the window: sent');
  source.write(Buffer.alloc(10, 3));
  await tick();
  await tick();
  assert.equal(out.messages.length, 2, '1200 bytes unacknowledged, over the window of 1000: held');
  assert.ok(source.isPaused(), 'and the relay is not read');
  pump.acked(600);
  await tick();
  await tick();
  assert.deepEqual(out.messages.map((m) => m.length), [600, 600, 10], 'an ack lets the held bytes go');
  // Hidden with a window's worth on the way: only those arrive; acks while hidden send nothing new.
  pump.setVisible(false);
  source.write(Buffer.alloc(5, 4));
  await tick();
  await tick();
  pump.acked(610);
  await tick();
  await tick();
  assert.equal(out.messages.length, 3, 'nothing sent while hidden, acknowledged or not');
  pump.setVisible(true);
  await tick();
  await tick();
  assert.deepEqual(out.messages.at(-1), Buffer.alloc(5, 4));
});

test('the socket pump keeps one message on the way: what arrives meanwhile waits (still read) and goes out as one message on the ack', async () => {
  const source = new PassThrough();
  const pump = new SocketPump(source, 1000, 1, 0);
  const out = sink(100);
  pump.attach(out);
  source.write(Buffer.from('RFB 003.008\n'));
  await tick();
  await tick();
  assert.deepEqual(out.messages.map(String), ['RFB 003.008\n']);
  for (let i = 0; i < 3; i++) {
    source.write(Buffer.alloc(100, i));
    await tick();
    await tick();
  }
  assert.equal(out.messages.length, 1, 'nothing more before the first message is acknowledged');
  assert.equal(source.isPaused(), false, 'the relay is still read meanwhile');
  pump.acked(12);
  await tick();
  await tick();
  assert.deepEqual(out.messages.slice(1), [Buffer.concat([Buffer.alloc(100, 0), Buffer.alloc(100, 1), Buffer.alloc(100, 2)])], 'the three reads in one message');
  // Waiting bytes count against the window: the relay is not read past it.
  source.write(Buffer.alloc(800, 3));
  await tick();
  await tick();
  assert.ok(source.isPaused(), '300 on the way and 800 waiting: over the window of 1000');
  pump.acked(300);
  await tick();
  await tick();
  assert.deepEqual(out.messages.at(-1), Buffer.alloc(800, 3));
  assert.equal(source.isPaused(), false);
  // Hidden: nothing goes, acknowledged or not; shown again, what waited goes out as one message.
  pump.setVisible(false);
  source.write(Buffer.alloc(5, 4));
  await tick();
  pump.acked(800);
  await tick();
  await tick();
  assert.equal(out.messages.length, 3);
  pump.setVisible(true);
  await tick();
  await tick();
  assert.deepEqual(out.messages.at(-1), Buffer.alloc(5, 4));
});

test('behind a small message on the way the next goes at once (the LastRect of a key echo); behind a large one it waits for the ack', async () => {
  const source = new PassThrough();
  const pump = new SocketPump(source, 1 << 20, 1, 1000);
  const out = sink(100);
  pump.attach(out);
  source.write(Buffer.alloc(300, 1)); // a key's rectangle
  await tick();
  await tick();
  source.write(Buffer.alloc(12, 2)); // its LastRect, a read later
  await tick();
  await tick();
  assert.deepEqual(out.messages, [Buffer.alloc(300, 1), Buffer.alloc(12, 2)], '312 bytes on the way: under 1000, nothing waits');
  source.write(Buffer.alloc(900, 3));
  await tick();
  await tick();
  assert.equal(out.messages.length, 3, '312 on the way is still small: the 900 go too');
  for (let i = 0; i < 2; i++) {
    source.write(Buffer.alloc(50, 4 + i));
    await tick();
    await tick();
  }
  assert.equal(out.messages.length, 3, '1212 on the way: the next reads wait for an ack');
  pump.acked(300);
  await tick();
  await tick();
  assert.equal(out.messages.length, 4, 'an ack brings the bytes on the way to 912, small again');
  assert.deepEqual(out.messages.at(-1), Buffer.concat([Buffer.alloc(50, 4), Buffer.alloc(50, 5)]), 'what waited goes as one message');
});
