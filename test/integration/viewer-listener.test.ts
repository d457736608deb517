// The external-viewer port against the real screen: loopback only, RFB through it, only this
// user may connect (a real second Unix user is refused), control per connection, at most 8
// connections, flat memory when the viewer or the relay stalls, and the screen's clipboard only
// for the connection in control (a raw legacy client, and TigerVNC's own vncviewer on an X
// display of this machine).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { after, afterEach, before, describe, test } from 'node:test';
import { withEnv } from '../../src/core/actions/sessionExec';
import { LeaseStore } from '../../src/core/lease';
import { openStream, run, type StreamProcess } from '../../src/core/runner';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { listenForViewers, type ViewerControl, type ViewerListener } from '../../src/core/viewerListener';
import { rssGrowthDuring } from '../support/memory';
import { createOtherUser, PEEK_CLIENT, peekResult, type OtherUser } from '../support/otherUser';
import { readExactly, rfbHandshake } from '../support/rfb';
import { hostProcesses, removeTestContainers, settings, tempMarkers, testLog, waitFor } from '../support/env';

/** Every client socket of a test, destroyed after it whatever happened (no slot held over). */
const clients: Socket[] = [];

function dial(port: number): Socket {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  clients.push(socket);
  return socket;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = dial(port);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The first `n` bytes the server sends, or how many came before it closed or reset. */
function firstBytes(socket: Socket, n: number, timeoutMs = 180_000): Promise<number> {
  return new Promise((resolve) => {
    let got = 0;
    const timer = setTimeout(() => resolve(got), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve(got);
    };
    socket.on('data', (chunk: Buffer) => {
      got += chunk.length;
      if (got >= n) {
        done();
      }
    });
    socket.once('close', done);
    socket.on('error', () => undefined);
  });
}

/** How long a new relay may take to answer: starting an exec is slow on a loaded machine. */
const SLOW_MS = 120_000;

const FRAMEBUFFER_UPDATE_REQUEST_FULL = Buffer.from([3, 0, 0, 0, 0, 0, 0x05, 0x00, 0x03, 0x20]); // 1280x800, non-incremental

describe('external viewer port', { timeout: 600_000 }, () => {
  const config = settings();
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const leaseDir = mkdtempSync(join(tmpdir(), 'botscreen-leases-'));
  const lease = new LeaseStore(leaseDir, config.workspaceKey);
  const control: ViewerControl = {
    holds: (viewerId) => lease.viewerMayInput(viewerId),
    take: (viewerId) => void lease.acquire(viewerId, 'test'),
    handBack: (viewerId) => void lease.release(viewerId),
  };
  let relaysOpened = 0;
  const refusals: string[] = [];
  const streamErrors: string[] = [];
  const openRelay = (): StreamProcess => {
    relaysOpened++;
    return controller.openRelay();
  };
  let listener: ViewerListener;
  let other: OtherUser | undefined;
  const relays = () => hostProcesses(`Bot Screen relay.*/${config.workspaceKey}/rfb\\.sock`).length;

  before(async () => {
    await controller.start();
    listener = await listenForViewers({
      openRelay,
      control,
      viewerPrefix: 'external-test',
      onRefused: (reason) => refusals.push(reason),
      onStreamError: (viewerId, detail) => streamErrors.push(`${viewerId}: ${detail}`),
    });
    other = createOtherUser();
  });

  afterEach(async () => {
    clients.splice(0).forEach((s) => s.destroy());
    await waitFor(() => listener.connections() === 0, 60_000, 50, 'the test\'s connections to end');
  });

  after(async () => {
    other?.remove();
    await listener?.close();
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    rmSync(leaseDir, { recursive: true, force: true });
  });

  test('a native viewer gets the RFB handshake on 127.0.0.1, each connection its own relay', async () => {
    const sockets = await Promise.all([open(listener.port), open(listener.port)]);
    for (const socket of sockets) {
      const init = await rfbHandshake(socket as unknown as Readable, socket, SLOW_MS);
      assert.deepEqual([init.width, init.height], [1280, 800]);
    }
    assert.equal(listener.connections(), 2);
    assert.equal(relays(), 2);
    sockets.forEach((s) => s.destroy());
    await waitFor(() => listener.connections() === 0 && relays() === 0, 60_000, 50, 'relays to end with their connections');
  });

  test('the listener binds loopback only', () => {
    const port = listener.port.toString(16).toUpperCase().padStart(4, '0');
    const listening = readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(`:${port}`) && fields[3] === '0A')
      .map((fields) => fields[1]);
    assert.deepEqual(listening, [`0100007F:${port}`], 'listening on 127.0.0.1 only');
  });

  test('the owner\'s VNC client we did not write (Debian\'s vncsnapshot) gets the desktop\'s framebuffer', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'botscreen-snap-')), 'screen.jpg');
    // vncsnapshot 1.2a (2004) cannot decode TigerVNC's Tight rectangles and waits forever on
    // them; Raw is the encoding every VNC client and server share.
    const result = await run(
      { command: 'vncsnapshot', args: ['-quiet', '-allowblank', '-encodings', 'raw', `127.0.0.1::${listener.port}`, out] },
      { timeoutMs: 60_000 },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const jpeg = readFileSync(out);
    assert.deepEqual([jpeg[0], jpeg[1]], [0xff, 0xd8], 'a JPEG');
    assert.deepEqual(jpegSize(jpeg), [1280, 800]);
    rmSync(dirname(out), { recursive: true, force: true });
  });

  test('another Unix user is refused before any byte or exec: raw IPv4 and IPv6 clients and vncsnapshot get nothing', async () => {
    const user = other!;
    const openedBefore = relaysOpened;
    refusals.length = 0;
    for (const family of ['4', '6']) {
      const result = await user.run(['/usr/bin/python3', '-c', PEEK_CLIENT, family, String(listener.port), '5', 'RFB 003.008\n']);
      const peek = peekResult(result.stdout);
      assert.ok(peek, `the client ran as ${user.name}: ${result.stdout}${result.stderr}`);
      assert.equal(peek.bytes, 0, `IPv${family}: no byte reaches another user`);
      assert.notEqual(peek.end, 'timeout', 'closed at once, not left waiting');
    }
    // Written to /tmp, where that user could write it if it got the screen.
    const picture = join('/tmp', `botscreen-snap-${user.name}.jpg`);
    const snap = await user.run(['vncsnapshot', '-quiet', '-encodings', 'raw', `127.0.0.1::${listener.port}`, picture], 60_000);
    assert.notEqual(snap.exitCode, 0, 'vncsnapshot of another user fails');
    assert.equal(existsSync(picture), false, 'and writes no picture');
    rmSync(picture, { force: true });
    assert.equal(relaysOpened, openedBefore, 'no relay exec was started for another user');
    assert.ok(refusals.length >= 3 && refusals.every((r) => r === 'otherUser'), `refused as another user: ${refusals.join(', ')}`);
    assert.equal(listener.connections(), 0);

    // The same IPv6 client as the owner gets the server's ProtocolVersion: the check tells users apart.
    const mine = await run({ command: '/usr/bin/python3', args: ['-c', PEEK_CLIENT, '6', String(listener.port), '60', '', '12'] }, { timeoutMs: 90_000 });
    assert.deepEqual(peekResult(mine.stdout), { bytes: 12, end: 'enough' }, mine.stdout + mine.stderr);
    await waitFor(() => listener.connections() === 0 && relays() === 0, 60_000, 50, 'the owner\'s probe to end');
  });

  test('control goes to one connection: a second viewer of the same user stays view-only; closing the holder hands back', async () => {
    const { sandbox, screen } = controller.runningSandbox()!;
    const pointer = async () => {
      const result = await run(sandbox.exec(withEnv(screen.env, ['xdotool', 'getmouselocation']), { interactive: false }), { timeoutMs: 20_000 });
      return result.stdout.replace(/ screen:.*$/s, '').trim();
    };
    const pointerEvent = (x: number, y: number) => Buffer.from([5, 0, x >> 8, x & 0xff, y >> 8, y & 0xff]);
    const first = await open(listener.port);
    await rfbHandshake(first as unknown as Readable, first, SLOW_MS);
    const second = await open(listener.port);
    await rfbHandshake(second as unknown as Readable, second, SLOW_MS);
    first.resume();
    second.resume();
    assert.equal(listener.takeControl(), 'external-test-' + (relaysOpened), 'the newest connection gets control');
    assert.equal(lease.read().holder, 'human');

    second.write(pointerEvent(321, 123));
    await waitFor(async () => (await pointer()) === 'x:321 y:123', 60_000, 50, 'the holder\'s pointer to move');
    first.write(pointerEvent(45, 67));
    await new Promise((r) => setTimeout(r, 5_000));
    assert.equal(await pointer(), 'x:321 y:123', 'the other connection\'s pointer is dropped');
    second.write(pointerEvent(322, 124));
    await waitFor(async () => (await pointer()) === 'x:322 y:124', 60_000, 50, 'the holder\'s pointer to move again');

    first.destroy();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(lease.read().holder, 'human', 'a view-only connection closing changes nothing');
    second.destroy();
    await waitFor(() => lease.read().holder === 'agent', 5_000, 50, 'the holder closing to hand back');
    await waitFor(() => listener.connections() === 0 && relays() === 0, 60_000, 50, 'both relays to end');
    assert.equal(listener.takeControl(), undefined, 'no connection, no control');
    assert.equal(lease.read().holder, 'agent');
  });

  /** Copies `text` on the screen as the desktop's user would (xclip owns the CLIPBOARD until someone else takes it). */
  const copyOnScreen = async (text: string) => {
    const { sandbox, screen } = controller.runningSandbox()!;
    const script = 'printf %s "$1" | xclip -selection clipboard >/dev/null 2>&1';
    const result = await run(sandbox.exec(withEnv(screen.env, ['sh', '-c', script, 'sh', text]), { interactive: false }), { timeoutMs: 20_000 });
    assert.equal(result.exitCode, 0, result.stderr);
  };
  const marker = (what: string) => `BS-${what}-${randomBytes(6).toString('hex')}`;

  /**
   * A raw RFB client asking for `encodings` (and answering the server's extended clipboard caps
   * with `caps`, when given) streams updates while the screen's clipboard changes: what it got
   * while not in control, in control, and after handing back.
   */
  const clipboardAsWatched = async (encodings: number[], caps: Buffer | undefined, seen: (received: Buffer, text: string) => boolean) => {
    const socket = await open(listener.port);
    await rfbHandshake(socket as unknown as Readable, socket, SLOW_MS);
    const setEncodings = Buffer.alloc(4 + 4 * encodings.length);
    setEncodings[0] = 2;
    setEncodings.writeUInt16BE(encodings.length, 2);
    encodings.forEach((e, i) => setEncodings.writeInt32BE(e, 4 + 4 * i));
    socket.write(setEncodings);
    if (caps) {
      socket.write(caps);
    }
    socket.write(FRAMEBUFFER_UPDATE_REQUEST_FULL);
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.resume();
    // Incremental requests keep updates (the terminal, the panel clock) flowing past the filter.
    const requests = setInterval(() => socket.write(Buffer.from([3, 1, 0, 0, 0, 0, 0x05, 0x00, 0x03, 0x20])), 200);
    try {
      await waitFor(() => received.length > 0, 60_000, 50, 'the first update');
      const agentCopy = marker('AGENT');
      await copyOnScreen(agentCopy);
      const before = received.length;
      await new Promise((r) => setTimeout(r, 4_000));
      assert.ok(!seen(received, agentCopy), 'the agent\'s copy reached a viewer not in control');

      const viewerId = listener.takeControl();
      assert.ok(viewerId);
      const shared = marker('SHARED');
      await copyOnScreen(shared);
      await waitFor(() => seen(received, shared), 30_000, 50, 'the screen\'s copy to reach the viewer in control');

      control.handBack(viewerId);
      const seenBefore = received.length;
      const afterHandBack = marker('AGAIN');
      await copyOnScreen(afterHandBack);
      await new Promise((r) => setTimeout(r, 4_000));
      assert.ok(!seen(received.subarray(seenBefore), afterHandBack), 'a copy after hand back reached the viewer');
      assert.ok(received.length > before, 'the stream went on around the dropped messages');
      assert.deepEqual(streamErrors, []);
      return received;
    } finally {
      clearInterval(requests);
      socket.destroy();
    }
  };

  test('a legacy client not in control never gets the screen\'s clipboard text; in control it does', async () => {
    // No ExtendedClipboard: the server sends clipboard text as it changes (legacy ServerCutText).
    // Encodings as a TightVNC-era client asks, CoRRE (4) among them, which the port removes.
    await clipboardAsWatched([7, 5, 16, 4, 2, 1, 0, -239, -223, -224, -26], undefined, (received, text) => received.includes(text));
  });

  test('an extended-clipboard client not in control gets the server\'s caps but never its Notify; in control it does', async () => {
    const EXTENDED_CLIPBOARD = 0xc0a1e5ce | 0;
    // Its caps: text, and the actions caps, request, peek, notify, provide; the gate zeroes the size.
    const caps = Buffer.concat([Buffer.from([6, 0, 0, 0]), Buffer.from([0xff, 0xff, 0xff, 0xf8]), Buffer.from([0x1f, 0, 0, 1]), Buffer.from([0, 0x10, 0, 0])]);
    // Notify of UTF-8 text: the only thing the server sends a Notify-capable client when its clipboard changes.
    const NOTIFY = Buffer.from([3, 0, 0, 0, 0xff, 0xff, 0xff, 0xfc, 0x08, 0, 0, 1]);
    const notifies = (bytes: Buffer) => {
      let n = 0;
      for (let at = bytes.indexOf(NOTIFY); at >= 0; at = bytes.indexOf(NOTIFY, at + 1)) {
        n++;
      }
      return n;
    };
    let lastCount = 0;
    const received = await clipboardAsWatched([16, 7, 1, 0, -223, -224, EXTENDED_CLIPBOARD], caps, (bytes) => {
      const n = notifies(bytes);
      const fresh = n > lastCount;
      lastCount = Math.max(lastCount, n);
      return fresh;
    });
    const serverCaps = received.indexOf(Buffer.from([3, 0, 0, 0, 0xff, 0xff, 0xff]));
    assert.ok(serverCaps >= 0 && (received[serverCaps + 8] & 0x01) === 0x01, 'the server\'s caps reached the viewer');
    assert.equal(notifies(received), 1, 'one Notify: the copy made while the viewer held control');
  });

  test('TigerVNC\'s vncviewer on an X display here: the port follows its stream, and the screen\'s clipboard reaches its display while it holds control, not before', async () => {
    const display = freeDisplay();
    const xvnc = spawn('Xvnc', [display, '-SecurityTypes', 'None', '-rfbport', '-1', '-nolisten', 'tcp', '-geometry', '1400x900'], { stdio: 'ignore' });
    let viewer: ChildProcess | undefined;
    const env = { ...process.env, DISPLAY: display };
    const onDisplay = (...args: string[]) => run({ command: 'env', args: [`DISPLAY=${display}`, ...args] }, { timeoutMs: 20_000 });
    const hostClipboard = async () => (await onDisplay('timeout', '5', 'xclip', '-o', '-selection', 'clipboard')).stdout;
    try {
      await waitFor(() => existsSync(`/tmp/.X11-unix/X${display.slice(1)}`), 30_000, 50, 'the host X display');
      const connectionsBefore = listener.connections();
      // It sends nothing of its own clipboard, so only the screen's text can land on its display.
      viewer = spawn('vncviewer', ['-SendClipboard=0', '-SendPrimary=0', '-SetPrimary=0', '-AcceptClipboard=1', `127.0.0.1::${listener.port}`], { env, stdio: 'ignore' });
      await waitFor(() => listener.connections() === connectionsBefore + 1, SLOW_MS, 50, 'vncviewer to connect');
      // Focused, as a person's viewer is: TigerVNC's viewer asks for announced text only then.
      await waitFor(async () => (await onDisplay('xdotool', 'search', '--name', 'TigerVNC')).exitCode === 0, 60_000, 200, 'the viewer window');
      await onDisplay('sh', '-c', 'xdotool search --name TigerVNC | while read w; do xdotool windowfocus "$w"; done');

      const agentCopy = marker('AGENT');
      await copyOnScreen(agentCopy);
      await new Promise((r) => setTimeout(r, 4_000));
      assert.notEqual(await hostClipboard(), agentCopy, 'the agent\'s copy reached this machine\'s clipboard');

      assert.ok(listener.takeControl());
      const shared = marker('SHARED');
      await copyOnScreen(shared);
      await waitFor(async () => (await hostClipboard()) === shared, 30_000, 250, 'the screen\'s copy on the viewer\'s display');
      assert.equal(viewer.exitCode, null, 'vncviewer still connected');
      assert.deepEqual(streamErrors, [], 'the port followed TigerVNC\'s stream');
    } finally {
      viewer?.kill();
      xvnc.kill();
    }
  });

  test('20 connections at once: 8 are served, 12 refused at once, and no exec is left after closing', async () => {
    const openedBefore = relaysOpened;
    refusals.length = 0;
    // Not waiting for each connect: a refused one may be reset before its connect is reported.
    const sockets = Array.from({ length: 20 }, () => dial(listener.port));
    const received = await Promise.all(sockets.map((s) => firstBytes(s, 12)));
    const served = received.filter((n) => n === 12).length;
    const refused = received.filter((n) => n === 0).length;
    testLog.warn(`external viewer port, 20 connections: ${served} served, ${refused} refused, relays running ${relays()}`);
    assert.deepEqual([served, refused], [8, 12]);
    assert.deepEqual(refusals, Array(12).fill('busy'));
    assert.equal(relays(), 8);
    assert.equal(relaysOpened - openedBefore, 8, 'no exec for a refused connection');
    sockets.forEach((s) => s.destroy());
    await waitFor(() => listener.connections() === 0 && relays() === 0, 60_000, 50, 'every relay to end');
    // Slots are free again.
    const again = dial(listener.port);
    assert.equal(await firstBytes(again, 12), 12, `served again (refusals: ${refusals.join(', ')})`);
    again.destroy();
    await waitFor(() => relays() === 0, 60_000, 50, 'the last relay to end');
  });

  test('a viewer that stops reading for 10 s while asking for full updates: the RSS here grows by less than 20 MB', async () => {
    const socket = await open(listener.port);
    await rfbHandshake(socket as unknown as Readable, socket, SLOW_MS);
    socket.write(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0])); // SetEncodings: Raw only, 4 MB per full update
    socket.pause();
    let requests = 0;
    const growth = await rssGrowthDuring(async () => {
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        socket.write(FRAMEBUFFER_UPDATE_REQUEST_FULL);
        requests++;
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    // The viewer reads again: the stream is intact (a FramebufferUpdate header comes).
    const header = await readExactly(socket as unknown as Readable, 4, 30_000);
    assert.equal(header[0], 0, 'a FramebufferUpdate');
    testLog.warn(`external viewer port, stalled reader: ${requests} full-update requests (${((requests * 1280 * 800 * 4) / (1 << 30)).toFixed(1)} GiB asked) in 10 s, RSS growth ${growth.toFixed(1)} MiB`);
    assert.ok(growth < 20, `RSS grew by ${growth.toFixed(1)} MiB`);
    socket.destroy();
    await waitFor(() => listener.connections() === 0 && relays() === 0, 60_000, 50, 'the relay to end');
  });

  test('a viewer that stops reading for 10 s while its relay sends as fast as an exec can: the RSS here grows by less than 20 MB', async () => {
    // The screen above cannot outrun a loaded machine's docker exec; this relay stand-in can (a
    // real exec streaming zeros), so without backpressure this test fails. It speaks RFB, as the
    // port passes only a stream it can follow: a 65535×65535 Raw rectangle of zeros is endless.
    const { sandbox } = controller.runningSandbox()!;
    const server = [
      "printf 'RFB 003.008\\n'",
      'head -c 12 >/dev/null', // the viewer's version
      "printf '\\001\\001\\000\\000\\000\\000'", // security None, then its result
      "printf '\\377\\377\\377\\377\\040\\030\\000\\001\\000\\377\\000\\377\\000\\377\\020\\010\\000\\000\\000\\000\\000\\000\\000\\000'",
      "printf '\\000\\000\\000\\001\\000\\000\\000\\000\\377\\377\\377\\377\\000\\000\\000\\000'",
      'exec cat /dev/zero',
    ].join('; ');
    const flooding = await listenForViewers({
      openRelay: () => openStream(sandbox.exec(['sh', '-c', server], { interactive: true })),
      control,
      viewerPrefix: 'external-flood',
    });
    const socket = await open(flooding.port);
    socket.write('RFB 003.008\n\x01\x01', 'latin1');
    await readExactly(socket as unknown as Readable, 12 + 6 + 24 + 16 + 1, SLOW_MS); // the exec is up and sending pixels
    socket.pause();
    const growth = await rssGrowthDuring(() => new Promise((r) => setTimeout(r, 10_000)));
    let after = 0;
    socket.on('data', (d: Buffer) => (after += d.length));
    socket.resume();
    await waitFor(() => after > 4 << 20, 60_000, 50, 'the stream to flow again once the viewer reads');
    testLog.warn(`external viewer port, stalled reader of a flooding relay: RSS growth ${growth.toFixed(1)} MiB in 10 s`);
    assert.ok(growth < 20, `RSS grew by ${growth.toFixed(1)} MiB`);
    socket.destroy();
    await flooding.close();
  });

  test('a relay that stops reading while the viewer in control pastes for 10 s: the RSS here grows by less than 20 MB', async () => {
    const { sandbox } = controller.runningSandbox()!;
    // A relay stand-in that never reads its stdin: the stalled side is real (docker exec's pipe).
    const stalled = await listenForViewers({
      openRelay: () => openStream(sandbox.exec(['sleep', '3600'], { interactive: true })),
      control: { ...control, holds: () => true },
      viewerPrefix: 'external-stall',
    });
    const socket = await open(stalled.port);
    socket.write('RFB 003.008\n');
    socket.write(Buffer.from([1, 1])); // security None, ClientInit
    // ClientCutText of 200 KB: it passes the gate whole (under the 256 KiB cap, in control).
    const paste = Buffer.alloc(8 + 200_000, 0x61);
    paste.fill(0, 0, 8);
    paste[0] = 6;
    paste.writeUInt32BE(200_000, 4);
    const burst = Buffer.concat(Array.from({ length: 8 }, () => paste)); // 1.6 MB
    let sent = 0;
    const growth = await rssGrowthDuring(async () => {
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        if (socket.write(burst)) {
          sent += burst.length;
          await new Promise((r) => setImmediate(r));
        } else {
          sent += burst.length;
          await Promise.race([new Promise((r) => socket.once('drain', r)), new Promise((r) => setTimeout(r, until - Date.now()))]);
        }
      }
    });
    testLog.warn(`external viewer port, stalled relay: the viewer got ${(sent / (1 << 20)).toFixed(1)} MiB out in 10 s, RSS growth ${growth.toFixed(1)} MiB`);
    assert.ok(growth < 20, `RSS grew by ${growth.toFixed(1)} MiB`);
    assert.ok(sent < 24 << 20, `backpressure reached the viewer (it sent ${sent} bytes)`);
    socket.destroy();
    await stalled.close();
  });

  test('closing the listener ends every connection and its relay', async () => {
    const socket = await open(listener.port);
    await rfbHandshake(socket as unknown as Readable, socket, SLOW_MS);
    await listener.close();
    await waitFor(() => socket.destroyed || socket.readableEnded, 5_000, 50, 'the connection to close');
    await waitFor(() => relays() === 0, 60_000, 50, 'no relay');
  });
});

/** An X display number no server uses on this machine. */
function freeDisplay(): string {
  for (let n = 140 + (process.pid % 40); n < 240; n++) {
    if (!existsSync(`/tmp/.X11-unix/X${n}`) && !existsSync(`/tmp/.X${n}-lock`)) {
      return `:${n}`;
    }
  }
  throw new Error('no free X display number');
}

/** Width and height from a JPEG's start-of-frame marker. */
function jpegSize(jpeg: Buffer): [number, number] | undefined {
  let offset = 2;
  while (offset + 9 < jpeg.length) {
    const marker = jpeg[offset + 1];
    const length = jpeg.readUInt16BE(offset + 2);
    if (marker >= 0xc0 && marker <= 0xc3) {
      return [jpeg.readUInt16BE(offset + 7), jpeg.readUInt16BE(offset + 5)];
    }
    offset += 2 + length;
  }
  return undefined;
}
