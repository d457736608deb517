import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { RELAY_SOURCE } from '../../src/core/relay';
import { MUX_CLOSE, MUX_DATA, MUX_END, MUX_HEADER_BYTES, MUX_OPEN, muxFrameHeader, RelayMux } from '../../src/core/relayMux';
import { openStream, type StreamProcess } from '../../src/core/runner';
import { waitFor } from '../support/process';

/** Resolves once `check` holds (polled), or fails after 30 s. */
const until = (check: () => boolean): Promise<boolean> => waitFor(check, 30_000, 10);

/**
 * The real relay.py in mux mode against a unix socket server in a private directory (as Xvnc's
 * is in the sandbox): each connection the server accepts answers "<n>:" + what it got.
 */
async function realMux(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-relaymux-'));
  const path = join(dir, 'rfb.sock');
  const accepted: Socket[] = [];
  const server: Server = createServer((socket) => {
    const n = accepted.push(socket);
    socket.on('data', (data) => socket.write(Buffer.concat([Buffer.from(`${n}:`), data])));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const execs: StreamProcess[] = [];
  const mux = new RelayMux(() => {
    const exec = openStream({ command: 'python3', args: ['-c', RELAY_SOURCE, 'mux', path] });
    execs.push(exec);
    return exec;
  });
  t.after(() => {
    mux.dispose();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { mux, accepted, execs, dir };
}

function collect(relay: StreamProcess): { text(): string; ended: Promise<void> } {
  let text = '';
  relay.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { text: () => text, ended: new Promise((resolve) => relay.stdout.on('end', resolve)) };
}

/** Two connections over one real mux, both accepted by the server, and what each receives. */
async function twoConnections(t: { after(fn: () => void): void }) {
  const real = await realMux(t);
  const a = real.mux.connect();
  const b = real.mux.connect();
  const outA = collect(a);
  const outB = collect(b);
  await until(() => real.accepted.length === 2);
  return { ...real, a, b, outA, outB };
}

test('the mux relay carries several connections over one exec, each its own bytes both ways', async (t) => {
  const { a, b, outA, outB, execs } = await twoConnections(t);
  a.stdin.write('hello');
  b.stdin.write('world');
  await until(() => outA.text().length > 0 && outB.text().length > 0);
  // The server numbers its connections in the order they came; each got its own bytes back.
  assert.match(outA.text(), /^[12]:hello$/);
  assert.match(outB.text(), /^[12]:world$/);
  assert.notEqual(outA.text()[0], outB.text()[0]);
  assert.equal(execs.length, 1, 'one exec for both connections');
  assert.equal(a.pid, b.pid);
});

test('a killed connection hangs up its socket alone; the last one ends the exec', async (t) => {
  const { mux, accepted, execs, a, b, outB } = await twoConnections(t);
  const closed = accepted.map((socket) => new Promise<void>((resolve) => socket.on('close', () => resolve())));
  let hungUp = 0;
  closed.forEach((p) => void p.then(() => hungUp++));
  a.kill();
  assert.deepEqual(await a.exited, { exitCode: null, stderr: '' });
  await until(() => hungUp === 1);
  b.stdin.write('still here');
  await until(() => outB.text().includes('still here'));
  assert.equal(execs.length, 1);
  b.kill();
  const { exitCode } = await execs[0].exited;
  assert.notEqual(exitCode, undefined, 'the exec ended with its last connection');
  await Promise.all(closed);
  // A new connection after that starts a new exec.
  const c = mux.connect();
  const outC = collect(c);
  c.stdin.write('again');
  await until(() => outC.text().endsWith('again'));
  assert.equal(execs.length, 2);
});

test('a connection the server hangs up ends with code 0, the others go on', async (t) => {
  const { accepted, a, b, outA, outB } = await twoConnections(t);
  a.stdin.write('x');
  await until(() => outA.text().length > 0);
  // Whichever socket answered A is A's.
  accepted[Number(outA.text()[0]) - 1].end();
  await outA.ended;
  assert.deepEqual(await a.exited, { exitCode: 0, stderr: '' });
  b.stdin.write('y');
  await until(() => outB.text().endsWith('y'));
});

test('a connection whose stdin ends tells the server, gets what it still sends, and ends with code 0', async (t) => {
  const { mux, accepted } = await realMux(t);
  const a = mux.connect();
  const outA = collect(a);
  await until(() => accepted.length === 1);
  // The server answers the end of input with last words, then hangs up.
  accepted[0].on('end', () => accepted[0].end('bye'));
  a.stdin.end('last');
  await outA.ended;
  assert.equal(outA.text(), '1:lastbye');
  assert.deepEqual(await a.exited, { exitCode: 0, stderr: '' });
});

test('a socket the relay refuses ends that connection with the plain relay\'s code 2 and why', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-relaymux-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const mux = new RelayMux(() => openStream({ command: 'python3', args: ['-c', RELAY_SOURCE, 'mux', join(dir, 'missing.sock')] }));
  t.after(() => mux.dispose());
  const a = mux.connect();
  const { exitCode, stderr } = await a.exited;
  assert.equal(exitCode, 2);
  assert.match(stderr, /refusing .*missing\.sock/);
});

/** A stand-in exec whose stdout the test writes frame by frame. */
function fakeExec() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let exit!: (code: number | null) => void;
  const exited = new Promise<{ exitCode: number | null; stderr: string }>((resolve) => (exit = (exitCode) => resolve({ exitCode, stderr: 'gone' })));
  const written: Buffer[] = [];
  stdin.on('data', (chunk: Buffer) => written.push(chunk));
  let killed = false;
  const exec: StreamProcess = { pid: 42, stdin, stdout, exited, kill: () => ((killed = true), exit(null)) };
  return { exec, stdout, written: () => Buffer.concat(written), exit, killed: () => killed };
}

test('frames split anywhere reach the right connection, without mixing', async () => {
  const fake = fakeExec();
  let unreachable = 0;
  const mux = new RelayMux(() => fake.exec, () => unreachable++);
  const a = mux.connect();
  const b = mux.connect();
  const outA = collect(a);
  const outB = collect(b);
  const stream = Buffer.concat([
    muxFrameHeader(MUX_DATA, 1, 3), Buffer.from('abc'),
    muxFrameHeader(MUX_DATA, 2, 2), Buffer.from('xy'),
    muxFrameHeader(MUX_DATA, 9, 4), Buffer.from('lost'), // a connection no longer known: skipped
    muxFrameHeader(MUX_DATA, 1, 1), Buffer.from('d'),
    muxFrameHeader(MUX_END, 1, 3), Buffer.from([2, 0x6e, 0x6f]),
  ]);
  for (const byte of stream) {
    fake.stdout.write(Buffer.from([byte]));
  }
  assert.deepEqual(await a.exited, { exitCode: 2, stderr: 'no' });
  assert.equal(unreachable, 1, 'the screen hears of the refused connection');
  await outA.ended;
  assert.equal(outA.text(), 'abcd');
  await until(() => outB.text() === 'xy');
  // What went to the relay: two opens, then nothing for A after its end, B's bytes, B's close.
  b.stdin.write('k');
  await until(() => fake.written().length >= 3 * MUX_HEADER_BYTES + 1);
  b.kill();
  const sent = fake.written();
  const ops = [];
  for (let at = 0; at < sent.length; ) {
    const length = sent.readUInt32BE(at + 5);
    ops.push(`${sent[at]}/${sent.readUInt32BE(at + 1)}/${sent.subarray(at + MUX_HEADER_BYTES, at + MUX_HEADER_BYTES + length).toString()}`);
    at += MUX_HEADER_BYTES + length;
  }
  assert.deepEqual(ops, [`${MUX_OPEN}/1/`, `${MUX_OPEN}/2/`, `${MUX_DATA}/2/k`, `${MUX_CLOSE}/2/`]);
  assert.ok(fake.killed(), 'no connection left: the exec is ended');
});

test('an exec that dies ends every connection it carried with its code', async () => {
  const fake = fakeExec();
  const mux = new RelayMux(() => fake.exec);
  const a = mux.connect();
  const b = mux.connect();
  fake.exit(137);
  assert.deepEqual(await a.exited, { exitCode: 137, stderr: 'gone' });
  assert.deepEqual(await b.exited, { exitCode: 137, stderr: 'gone' });
});
