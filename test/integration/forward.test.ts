// Port forwarding through the exec stream, for real: a container whose loopback servers are
// reached from this machine's 127.0.0.1 through `docker exec` relays.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { DockerCli } from '../../src/core/backends/dockerCli';
import { SshBackend } from '../../src/core/backends/ssh';
import { PortForwarder } from '../../src/core/forward';
import { ScreenError } from '../../src/core/problem';
import { run } from '../../src/core/runner';
import type { Sandbox } from '../../src/core/sandbox';
import { IMAGE, hostProcesses, sh, testLog, waitFor } from '../support/env';
import { rssGrowthDuring } from '../support/memory';
import { createOtherUser, PEEK_CLIENT, peekResult, type OtherUser } from '../support/otherUser';
import { startSshd, type Sshd } from '../support/sshd';

/** The forwards this file opens, as the extension's context owns its own. */
const forwarder = new PortForwarder();

/**
 * Test servers on the container's loopback, one mode per port:
 *   7001 upper: reads to EOF, then answers the upper-cased bytes and `|EOF` and closes (half-close);
 *   7002 echo:  echoes every chunk at once, closes on EOF;
 *   7003 hold:  reads to EOF, then keeps the connection open forever;
 *   7004 flood: sends 64 KiB chunks until the connection breaks, never closes by itself;
 *   7005 stall: never reads and never closes.
 */
const SERVERS = `
import socket, threading, time

def upper(c):
    data = b""
    while True:
        d = c.recv(65536)
        if not d: break
        data += d
    c.sendall(data.upper() + b"|EOF")
    c.close()
def echo(c):
    while True:
        d = c.recv(1 << 20)
        if not d: break
        c.sendall(d)
    c.close()
def hold(c):
    while c.recv(65536): pass
    time.sleep(100000)
def flood(c):
    chunk = b"z" * 65536
    try:
        while True:
            c.sendall(chunk)
    except OSError:
        time.sleep(100000)
def stall(c):
    time.sleep(100000)
def serve(port, handler):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(128)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handler, args=(c,), daemon=True).start()
for port, handler in ((7001, upper), (7002, echo), (7003, hold), (7004, flood), (7005, stall)):
    threading.Thread(target=serve, args=(port, handler), daemon=True).start()
time.sleep(100000)
`;

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the peer sends until it closes its side. */
function readAll(socket: Socket, timeoutMs = 15_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error(`no EOF within ${timeoutMs} ms (got ${Buffer.concat(chunks).length} bytes)`)), timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe('port forwarding through docker exec', () => {
  const name = `botscreen-forward-${process.pid}`;
  let id: string;
  let sandbox: Sandbox;
  let other: OtherUser | undefined;

  /** The relays' local clients on this machine: `docker exec` of this container. */
  const hostRelays = () => hostProcesses(`docker exec -i -u pn -- ${id} sh -c`);
  /**
   * Relays inside the container. Asynchronous on purpose: Docker holds a new exec's completion
   * while another exec of the container that exited still has undrained output, so a
   * synchronous `docker exec` here would deadlock against a relay this process must drain.
   */
  const containerRelays = async () => {
    const { stdout } = await run({ command: 'docker', args: ['exec', id, 'pgrep', '-f', 'Bot Screen relay'] }, { timeoutMs: 10_000 });
    return stdout.split('\n').filter(Boolean);
  };

  before(async () => {
    id = sh('docker', ['run', '-d', '--init', '--name', name, '--label', 'test.botscreen=forward', '--shm-size', '512m', IMAGE, 'sleep', 'infinity']).trim();
    assert.match(id, /^[0-9a-f]{64}$/, 'the test container started');
    sandbox = new DockerCli('docker').sandbox(id, name, 'pn');
    sh('docker', ['exec', '-d', '-u', 'pn', id, 'python3', '-c', SERVERS]);
    await waitFor(() => sh('docker', ['exec', id, 'sh', '-c', 'cat /proc/net/tcp | grep -c " 0A "']).trim() === '5', 10_000, 50, 'the test servers');
    other = createOtherUser();
  });

  // Whatever a test left open (a failed one included) is gone before the next one counts relays.
  afterEach(() => forwarder.close(id));

  after(async () => {
    other?.remove();
    await forwarder.close();
    sh('docker', ['rm', '-f', name]);
  });

  test('a loopback listener only; the same sandbox, host and port give the same local port', async () => {
    const port = await forwarder.forward(sandbox, 7001);
    assert.equal(await forwarder.forward(sandbox, 7001), port);
    assert.equal(await forwarder.forward(sandbox, 7001, '127.0.0.1'), port);
    const [a, b] = await Promise.all([forwarder.forward(sandbox, 7002), forwarder.forward(sandbox, 7002)]);
    assert.equal(a, b, 'concurrent calls share one listener');
    assert.notEqual(a, port);
    const listening = sh('ss', ['-Hltn', `sport = :${port}`]).trim().split('\n').filter(Boolean);
    assert.equal(listening.length, 1);
    assert.match(listening[0], new RegExp(`\\s127\\.0\\.0\\.1:${port}\\s`));
  });

  test('bytes both ways and half-close: the server answers only after our FIN, and we still get it', async () => {
    const socket = await open(await forwarder.forward(sandbox, 7001));
    const answer = readAll(socket);
    socket.write('hello ');
    socket.end('world');
    assert.equal((await answer).toString(), 'HELLO WORLD|EOF');
  });

  test('8 MiB of random bytes echo back exact; throughput measured on 64 MiB', async () => {
    const port = await forwarder.forward(sandbox, 7002);
    const payload = randomBytes(8 << 20);
    const socket = await open(port);
    const back = readAll(socket);
    socket.end(payload);
    assert.ok((await back).equals(payload), 'echoed bytes differ');

    const big = randomBytes(64 << 20);
    const started = process.hrtime.bigint();
    const s2 = await open(port);
    const echoed = readAll(s2, 60_000);
    s2.end(big);
    const got = await echoed;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    assert.equal(got.length, big.length);
    testLog.warn(`forward echo: 64 MiB each way in ${seconds.toFixed(2)} s = ${(64 / seconds).toFixed(0)} MiB/s per direction`);
  });

  test('100 connections opened and closed leave no relay here or in the container, and one listener', async () => {
    const port = await forwarder.forward(sandbox, 7002);
    const startedAt = Date.now();
    // Batches of 8, the most a listener serves at once; each waits for the last one's relays.
    for (let batch = 0; batch < 13; batch++) {
      await waitFor(async () => (await forwarder.list()).every((f) => f.connections === 0), 15_000, 50, 'the previous batch to end');
      await Promise.all(
        Array.from({ length: batch === 12 ? 4 : 8 }, async (_, i) => {
          const socket = await open(port);
          if (i % 2 === 0) {
            // A short exchange, then a clean close.
            const back = readAll(socket, 120_000);
            socket.end(`ping ${batch}.${i}`);
            assert.equal((await back).toString(), `ping ${batch}.${i}`);
          } else {
            // Opened and dropped at once.
            socket.destroy();
          }
        }),
      );
    }
    testLog.warn(`100 forwarded connections in ${Date.now() - startedAt} ms`);
    await waitFor(async () => (await forwarder.list()).every((f) => f.connections === 0), 15_000, 50, 'every connection to end');
    await waitFor(() => hostRelays().length === 0, 10_000, 50, 'no docker exec relay clients on this machine');
    await waitFor(async () => (await containerRelays()).length === 0, 10_000, 50, 'no relays in the container');
    const forwards = (await forwarder.list()).filter((f) => f.sandboxId === id && f.remotePort === 7002);
    assert.equal(forwards.length, 1, 'still exactly one listener');
    assert.equal(sh('ss', ['-Hltn', `sport = :${port}`]).trim().split('\n').filter(Boolean).length, 1);
  });

  test('a client that goes away while the server streams forever: its relay is killed in the container', async () => {
    const socket = await open(await forwarder.forward(sandbox, 7004));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    assert.equal((await containerRelays()).length, 1);
    socket.destroy();
    await waitFor(async () => (await containerRelays()).length === 0, 10_000, 50, 'the streaming relay to be killed');
    await waitFor(() => hostRelays().length === 0, 5_000, 50, 'no relay client here');
  });

  test('closing the forwards closes the listener and kills live relays, a half-closed one too', async () => {
    const port = await forwarder.forward(sandbox, 7003);
    const open1 = await open(port);
    const halfClosed = await open(port);
    // Our side closing shows as EOF (or a reset) on each client.
    const closed = Promise.all([open1, halfClosed].map((s) => new Promise((resolve) => (s.once('end', resolve), s.once('close', resolve)))));
    for (const s of [open1, halfClosed]) {
      s.on('error', () => undefined);
      s.resume();
    }
    open1.write('x');
    // A FIN is a half-close: the server may still answer, so that relay stays until the forwards close.
    halfClosed.end('y');
    await waitFor(async () => (await containerRelays()).length === 2, 10_000, 50, 'both relays to run');
    await new Promise((r) => setTimeout(r, 2_500));
    assert.equal((await containerRelays()).length, 2, 'a half-closed connection keeps its relay');
    const closing = Date.now();
    await forwarder.close(id);
    testLog.warn(`closing the forwards with 2 live relays: ${Date.now() - closing} ms`);
    await closed;
    assert.deepEqual(await containerRelays(), []);
    assert.deepEqual(hostRelays(), []);
    assert.deepEqual((await forwarder.list()).filter((f) => f.sandboxId === id), []);
    await assert.rejects(open(port), /ECONNREFUSED/);
  });

  test('bad ports and hosts are refused before anything runs', async () => {
    for (const port of [0, -1, 65536, 1.5, Number.NaN]) {
      await assert.rejects(forwarder.forward(sandbox, port), (err: unknown) => err instanceof ScreenError && err.problem.code === 'badPort');
    }
    for (const host of ['-x', 'a b', '', 'h;id', 'a\nb']) {
      await assert.rejects(forwarder.forward(sandbox, 80, host), (err: unknown) => err instanceof ScreenError && err.problem.code === 'badHost');
    }
    assert.deepEqual(await forwarder.list(), []);
  });

  test('Chromium DevTools /json/version in the sandbox is reachable from this machine through the forward', async () => {
    sh('docker', [
      'exec', '-d', '-u', 'pn', id, 'chromium', '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--remote-debugging-port=9222', '--user-data-dir=/home/pn/.cache/botscreen-devtools-test', 'about:blank',
    ]);
    const refusals: string[] = [];
    const port = await forwarder.forward(sandbox, 9222, undefined, { onRefused: (reason) => refusals.push(reason) });
    let version: { Browser?: string; webSocketDebuggerUrl?: string } = {};
    await waitFor(async () => {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/json/version`);
        version = (await response.json()) as typeof version;
        return true;
      } catch {
        return false;
      }
    }, 120_000, 50, 'DevTools to answer');
    assert.match(version.Browser ?? '', /Chrome\//);
    assert.match(version.webSocketDebuggerUrl ?? '', /^ws:\/\/127\.0\.0\.1(:\d+)?\/devtools\/browser\//);

    // curl, a client we did not write: the owner gets /json/version, another Unix user nothing.
    const mine = await run({ command: 'curl', args: ['-sS', '--max-time', '90', `http://127.0.0.1:${port}/json/version`] }, { timeoutMs: 120_000 });
    assert.equal(mine.exitCode, 0, mine.stderr);
    assert.match(mine.stdout, /"Browser": "(HeadlessChrome|Chrome)\//);
    const theirs = await other!.run(['curl', '-sS', '--max-time', '90', `http://127.0.0.1:${port}/json/version`], 120_000);
    assert.notEqual(theirs.exitCode, 0, `curl as ${other!.name} fails`);
    assert.equal(theirs.stdout, '', 'and gets no byte');
    // Reset by our guard: curl says "reset" or "Recv failure", or "Couldn't connect" when the reset
    // came before it looked at its connect; the guard's own report says it was us, for that user.
    assert.match(theirs.stderr, /reset|Empty reply|Recv failure|Couldn't connect/i);
    assert.deepEqual(refusals, ['otherUser'], 'the listener took the connection and refused it as another user\'s');
    await forwarder.close(id);
  });

  test('another Unix user is refused before any byte or exec, over IPv4 and IPv6; the owner\'s same client is served', async () => {
    const refusals: string[] = [];
    const port = await forwarder.forward(sandbox, 7002, undefined, { onRefused: (reason) => refusals.push(reason) });
    for (const family of ['4', '6']) {
      const result = await other!.run(['/usr/bin/python3', '-c', PEEK_CLIENT, family, String(port), '5', 'hello']);
      const peek = peekResult(result.stdout);
      assert.ok(peek, `the client ran as ${other!.name}: ${result.stdout}${result.stderr}`);
      assert.equal(peek.bytes, 0, `IPv${family}: the echo server's answer never reaches another user`);
      assert.notEqual(peek.end, 'timeout', 'closed at once, not left waiting');
    }
    assert.deepEqual(refusals, ['otherUser', 'otherUser']);
    assert.deepEqual(await containerRelays(), [], 'no relay was started for them');
    assert.deepEqual(hostRelays(), []);
    const mine = await run({ command: '/usr/bin/python3', args: ['-c', PEEK_CLIENT, '6', String(port), '60', 'hello', '5'] }, { timeoutMs: 90_000 });
    assert.deepEqual(peekResult(mine.stdout), { bytes: 5, end: 'enough' }, mine.stdout + mine.stderr);
    assert.deepEqual(refusals, ['otherUser', 'otherUser']);
    await forwarder.close(id);
  });

  test('20 connections at once: 8 are served, 12 refused at once, and no exec is left after closing', async (t) => {
    const refusals: string[] = [];
    const port = await forwarder.forward(sandbox, 7002, undefined, { onRefused: (reason) => refusals.push(reason) });
    // Not waiting for each connect: a refused one may be reset before its connect is reported.
    const sockets = Array.from({ length: 20 }, () => connect({ host: '127.0.0.1', port }));
    t.after(() => sockets.forEach((s) => s.destroy()));
    // Served: the echo comes back (the machine may be slow to start 8 execs); refused: closed
    // with no byte.
    const outcomes = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<string>((resolve) => {
            let got = 0;
            const timer = setTimeout(() => resolve(`silent after ${got} bytes`), 180_000);
            socket.on('error', () => undefined);
            socket.on('data', (d: Buffer) => {
              got += d.length;
              if (got >= 4) {
                clearTimeout(timer);
                resolve(got === 4 ? 'served' : `${got} bytes`);
              }
            });
            socket.once('close', () => {
              clearTimeout(timer);
              resolve(got === 0 ? 'refused' : `closed after ${got} bytes`);
            });
            socket.write('ping');
          }),
      ),
    );
    const served = outcomes.filter((o) => o === 'served').length;
    const refused = outcomes.filter((o) => o === 'refused').length;
    const relaysHere = hostRelays().length;
    const relaysThere = (await containerRelays()).length;
    testLog.warn(`forward, 20 connections: ${served} served, ${refused} refused; relays ${relaysHere} here, ${relaysThere} in the container`);
    assert.deepEqual([served, refused], [8, 12], outcomes.join(', '));
    assert.deepEqual(refusals, Array(12).fill('busy'));
    assert.deepEqual([relaysHere, relaysThere], [8, 8]);
    sockets.forEach((s) => s.destroy());
    await waitFor(() => hostRelays().length === 0, 60_000, 50, 'no docker exec relay clients on this machine');
    await waitFor(async () => (await containerRelays()).length === 0, 60_000, 50, 'no relays in the container');
    await forwarder.close(id);
  });

  test('a client that stops reading for 10 s while the server floods: the RSS here grows by less than 20 MB', async () => {
    const socket = await open(await forwarder.forward(sandbox, 7004));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause();
    const growth = await rssGrowthDuring(() => new Promise((r) => setTimeout(r, 10_000)));
    let after = 0;
    socket.on('data', (d: Buffer) => (after += d.length));
    socket.resume();
    await waitFor(() => after > 4 << 20, 60_000, 50, 'the flood to flow again once the client reads');
    testLog.warn(`forward, stalled reader: RSS growth ${growth.toFixed(1)} MiB in 10 s`);
    assert.ok(growth < 20, `RSS grew by ${growth.toFixed(1)} MiB`);
    await forwarder.close(id);
  });

  test('a server that stops reading while the client sends for 10 s: the RSS here grows by less than 20 MB', async () => {
    const socket = await open(await forwarder.forward(sandbox, 7005));
    socket.on('error', () => undefined);
    const chunk = Buffer.alloc(64 << 10, 0x61);
    let sent = 0;
    const growth = await rssGrowthDuring(async () => {
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        sent += chunk.length;
        if (socket.write(chunk)) {
          await new Promise((r) => setImmediate(r));
        } else {
          await Promise.race([new Promise((r) => socket.once('drain', r)), new Promise((r) => setTimeout(r, until - Date.now()))]);
        }
      }
    });
    testLog.warn(`forward, stalled server: the client got ${(sent / (1 << 20)).toFixed(1)} MiB out in 10 s, RSS growth ${growth.toFixed(1)} MiB`);
    assert.ok(growth < 20, `RSS grew by ${growth.toFixed(1)} MiB`);
    assert.ok(sent < 24 << 20, `backpressure reached the client (it sent ${sent} bytes)`);
    await forwarder.close(id);
  });
});

describe('port forwarding through ssh (the server has AllowTcpForwarding no)', () => {
  let sshd: Sshd;
  let backend: SshBackend;
  let sandbox: Sandbox;
  const sshRelays = () => sh('pgrep', ['-u', String(sshd.uid), '-f', 'Bot Screen relay']).split('\n').filter(Boolean);

  before(async () => {
    sshd = await startSshd();
    backend = new SshBackend(sshd.settings(), testLog);
    sandbox = await backend.prepare();
  });

  after(async () => {
    await forwarder.close();
    await backend?.closeMaster();
    await sshd?.stop();
  });

  test('a port on the ssh host is reached through an exec stream, and closing the forwards leaves no relay', async () => {
    // The target is sshd itself: its banner proves bytes arrive from the far side.
    const port = await forwarder.forward(sandbox, sshd.port);
    const socket = await open(port);
    socket.on('error', () => undefined);
    const banner = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString('latin1'))));
    assert.match(banner, /^SSH-2\.0-OpenSSH/);
    assert.equal(sshRelays().length, 1, 'the relay runs as the login user');
    await forwarder.close(sandbox.id);
    await waitFor(() => sshRelays().length === 0, 10_000, 50, 'no relay of the ssh user');
  });
});
