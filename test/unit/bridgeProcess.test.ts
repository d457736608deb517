// The direct channel's bridge process (src/core/bridgeProcess.ts, the built dist/bridge.js): a
// webview's socket (a raw RFC 6455 client) reaches a relay that the bridge runs, with the
// webview's messages going through the extension host (here: the test) before they reach the
// relay; the upgrade checks hold in the bridge; visibility goes on the socket; and nothing is left
// running, not when a session ends, not when the bridge is disposed, not when it is killed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BridgeProcess, type BridgeSession } from '../../src/core/bridgeProcess';
import { OP_BINARY, OP_TEXT } from '../../src/core/directChannel';
import { clientFrame, dial, ORIGIN, serverFrames } from '../support/directClient';
import { waitFor } from '../support/process';

const SCRIPT = join(__dirname, '..', '..', '..', 'dist', 'bridge.js');
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const TIMES = { quietMs: 150, maxMs: 1000 };

/** An echoing relay (what it reads, it writes back), named by `marker` in its argv so the test can find it. */
function echoRelay(marker: string) {
  const source = 'import os,sys\nwhile True:\n    d = os.read(0, 65536)\n    if not d: break\n    os.write(1, d)';
  return { command: 'python3', args: ['-c', source, marker] };
}

const running = (marker: string) => spawnSync('pgrep', ['-f', marker], { encoding: 'utf8' }).stdout.trim() !== '';

function bridgeFor(t: { after(fn: () => void): void }, lost?: () => void): BridgeProcess {
  const bridge = new BridgeProcess(SCRIPT, silent, lost);
  t.after(() => bridge.dispose());
  return bridge;
}

/** A session whose webview input goes straight back to the relay, as a gate that lets all through would. */
function echoSession(bridge: BridgeProcess, marker: string, visible = true) {
  const exits: { exitCode: number | null; endedByOwner: boolean }[] = [];
  let activity = 0;
  const session: BridgeSession = bridge.open(echoRelay(marker), visible, TIMES, {
    exited: (exitCode, endedByOwner) => exits.push({ exitCode, endedByOwner }),
    activity: () => activity++,
  });
  const inputs: Buffer[] = [];
  session.onInput = (data) => {
    inputs.push(Buffer.from(data));
    session.write(data);
  };
  return { session, exits, inputs, activity: () => activity };
}

test('a webview message goes to the extension host, what it writes reaches the relay, and the relay answers on the socket', async (t) => {
  const bridge = bridgeFor(t);
  const port = await bridge.listen();
  assert.ok(port > 0);
  const marker = `bridge-echo-${randomBytes(6).toString('hex')}`;
  const { session, inputs, activity } = echoSession(bridge, marker);
  const token = session.offer(ORIGIN);
  const client = dial(port, `/${token}`);
  assert.match(await client.response, /^HTTP\/1\.1 101/);
  client.socket.write(clientFrame(OP_BINARY, Buffer.from('RFB 003.008\n')));
  await waitFor(() => serverFrames(client.received()).some((f) => f.opcode === OP_BINARY), 10_000, 20, 'the echo');
  assert.deepEqual(inputs.map(String), ['RFB 003.008\n'], 'the webview message came to the extension host once');
  assert.equal(serverFrames(client.received()).filter((f) => f.opcode === OP_BINARY).map((f) => String(f.payload)).join(''), 'RFB 003.008\n');
  await waitFor(() => activity() > 0, 5000, 20, 'activity');

  session.setVisible(false, 7);
  await waitFor(() => serverFrames(client.received()).some((f) => f.opcode === OP_TEXT), 5000, 20, 'the visibility message');
  assert.equal(String(serverFrames(client.received()).find((f) => f.opcode === OP_TEXT)?.payload), 'hidden 7');

  // The token was used: a second dial with it is refused before a byte of the session.
  const again = dial(port, `/${token}`);
  assert.match(await again.response, /^HTTP\/1\.1 403/);
});

test('the bridge refuses a guessed token and another origin; an offer stays usable by its own origin', async (t) => {
  const bridge = bridgeFor(t);
  const port = await bridge.listen();
  const { session } = echoSession(bridge, `bridge-refuse-${randomBytes(6).toString('hex')}`);
  const token = session.offer(ORIGIN);
  const guessed = dial(port, `/${randomBytes(32).toString('hex')}`);
  assert.match(await guessed.response, /^HTTP\/1\.1 403/);
  const otherOrigin = dial(port, `/${token}`, { origin: 'https://evil.example' });
  assert.match(await otherOrigin.response, /^HTTP\/1\.1 403/);
  const mine = dial(port, `/${token}`);
  assert.match(await mine.response, /^HTTP\/1\.1 101/);
});

test('a session ended by the extension host ends its relay and closes its socket; its exit is told once', async (t) => {
  const bridge = bridgeFor(t);
  const port = await bridge.listen();
  const marker = `bridge-end-${randomBytes(6).toString('hex')}`;
  const { session, exits } = echoSession(bridge, marker);
  const client = dial(port, `/${session.offer(ORIGIN)}`);
  await client.response;
  await waitFor(() => running(marker), 5000, 20, 'the relay');
  session.end([Buffer.from('last')]);
  await session.exited;
  await client.closed;
  assert.equal(exits.length, 1);
  assert.equal(exits[0].endedByOwner, true, 'a relay its owner ended says nothing about the sandbox');
  await waitFor(() => !running(marker), 5000, 20, 'the relay to end');
});

test('a disposed bridge, and a killed one, leave no relay running; a killed one is reported lost and its sessions end', async (t) => {
  const disposed = bridgeFor(t);
  await disposed.listen();
  const first = `bridge-dispose-${randomBytes(6).toString('hex')}`;
  echoSession(disposed, first);
  await waitFor(() => running(first), 5000, 20, 'the relay');
  disposed.dispose();
  await waitFor(() => !running(first) && !disposed.alive, 5000, 20, 'the relay to end with its bridge');

  let lost = 0;
  const killed = bridgeFor(t, () => lost++);
  await killed.listen();
  const second = `bridge-kill-${randomBytes(6).toString('hex')}`;
  const { session, exits } = echoSession(killed, second);
  await waitFor(() => running(second), 5000, 20, 'the relay');
  process.kill(killed.pid!, 'SIGKILL');
  await session.exited;
  assert.equal(lost, 1);
  assert.deepEqual(exits, [{ exitCode: null, endedByOwner: true }]);
  assert.equal(killed.alive, false, 'a new session would go the postMessage way');
  // Its relay's stdin closed with it: the relay ends on its own.
  await waitFor(() => !running(second), 5000, 20, 'the relay to end after its bridge was killed');
});

test('what the extension host hands a closing session reaches the relay before it hangs up; a relay that ends by itself is told so', async (t) => {
  const bridge = bridgeFor(t);
  await bridge.listen();
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-bridge-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'stdin');
  // A relay that keeps what it reads until its stdin ends.
  const keep = 'import os,sys\nf = open(sys.argv[1], "wb")\nwhile True:\n    d = os.read(0, 65536)\n    if not d: break\n    f.write(d); f.flush()';
  const exits: boolean[] = [];
  const session = bridge.open({ command: 'python3', args: ['-c', keep, file] }, true, TIMES, { exited: (_code, byOwner) => exits.push(byOwner), activity() {} });
  session.write(Buffer.from('first '));
  await waitFor(() => existsSync(file) && readFileSync(file, 'utf8') === 'first ', 5000, 20, 'the first write');
  session.end([Buffer.from('release '), Buffer.from('keys')]);
  await session.exited;
  assert.equal(readFileSync(file, 'utf8'), 'first release keys');
  assert.deepEqual(exits, [true]);

  const byItself: { exitCode: number | null; endedByOwner: boolean }[] = [];
  const gone = bridge.open({ command: 'python3', args: ['-c', 'import sys; sys.exit(3)'] }, true, TIMES, {
    exited: (exitCode, endedByOwner) => byItself.push({ exitCode, endedByOwner }),
    activity() {},
  });
  await gone.exited;
  assert.deepEqual(byItself, [{ exitCode: 3, endedByOwner: false }], 'the screen decides what a relay that ended by itself says about the sandbox');
});

test('the bridge runs with its young generation capped (V8 grew it to 32 MiB under a stream of webview messages: docs/soak/bridge-memory.md)', async (t) => {
  const bridge = bridgeFor(t);
  await bridge.listen();
  const argv = readFileSync(`/proc/${bridge.pid}/cmdline`, 'utf8').split('\0');
  assert.ok(argv.includes('--max-semi-space-size=1'), argv.join(' '));
  assert.equal(argv.at(-2), SCRIPT, 'the flag goes to Node, before the script');
});
