import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { HiddenRead, isResumeRequest } from '../../src/core/hiddenRead';
import { RfbInputGate } from '../../src/core/rfbInputGate';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A FramebufferUpdateRequest of a width × height screen at 0,0. */
const request = (incremental: 0 | 1, width = 1280, height = 800) =>
  new Uint8Array([3, incremental, 0, 0, 0, 0, width >> 8, width & 0xff, height >> 8, height & 0xff]);

/** A relay's output and a pump that records whether it is told to read. */
function setup(visible: boolean, quietMs = 60, maxMs = 1000) {
  const source = new PassThrough();
  const reads: boolean[] = [];
  const reader = { setVisible: (v: boolean) => reads.push(v) };
  const rule = new HiddenRead(visible, () => ({ source, reader }), { quietMs, maxMs });
  return { source, reads, rule, reading: () => reads.at(-1) };
}

/** EnableContinuousUpdates (on or off) for a 1280 × 800 screen. */
const continuous = (on: 0 | 1) => new Uint8Array([150, on, 0, 0, 0, 0, 5, 0, 3, 32]);

test('a resume request is continuous updates turned on, or a non-incremental update request; nothing else is', () => {
  assert.equal(isResumeRequest(continuous(1)), true, 'a shown webview\'s resume');
  assert.equal(isResumeRequest(request(0)), true);
  assert.equal(isResumeRequest(request(0, 1, 1)), true, 'the view\'s 1-pixel check on a quiet link is one too');
  assert.equal(isResumeRequest(continuous(0)), false, 'a hidden webview\'s pause');
  assert.equal(isResumeRequest(request(1)), false, 'noVNC\'s incremental request');
  assert.equal(isResumeRequest(new Uint8Array([3, 0, 0, 0])), false, 'a part of a message');
  assert.equal(isResumeRequest(new Uint8Array([5, 0, 0, 10, 0, 10, 0, 0, 0, 0])), false, 'another type of the same length');
});

test('hidden: the relay is read until quiet, then not; VS Code\'s "visible" reads it again', async () => {
  const { source, rule, reading } = setup(true);
  rule.setVisible(false);
  assert.equal(reading(), undefined, 'still read right after the hide, while what was on its way drains');
  source.write('x');
  await sleep(30);
  assert.equal(reading(), undefined, 'data postpones the stop');
  await sleep(100);
  assert.equal(reading(), false, 'quiet: no longer read');
  rule.setVisible(true);
  assert.equal(reading(), true);
  assert.equal(rule.stats.earlyReveals, 0);
});

test('hidden: the webview\'s resume reads the relay at once, before VS Code says "visible"', async () => {
  const { rule, reads, reading } = setup(false);
  rule.setVisible(false);
  await sleep(100);
  assert.equal(reading(), false);
  rule.clientMessage(request(1));
  rule.clientMessage(continuous(0));
  assert.equal(reading(), false, 'an incremental request (held back by a paused webview anyway) or a pause reads nothing');
  rule.clientMessage(continuous(1));
  assert.equal(reading(), true, 'read as soon as the resume passed');
  assert.equal(rule.stats.earlyReveals, 1);
  rule.setVisible(true); // VS Code's word follows
  await sleep(150);
  assert.equal(reading(), true, 'still read once quiet: VS Code said "visible"');
  rule.clientMessage(request(0));
  assert.equal(rule.stats.earlyReveals, 1, 'a request while visible is no reveal');
  assert.deepEqual(reads, [false, true, true]);
});

test('a resume request VS Code does not follow with "visible" reads only until the relay is quiet again', async () => {
  const { source, rule, reading } = setup(false, 60, 400);
  rule.setVisible(false);
  await sleep(100);
  rule.clientMessage(request(0, 1, 1));
  assert.equal(reading(), true);
  source.write('answer');
  await sleep(150);
  assert.equal(reading(), false, 'quiet again: no longer read');
  // A relay that never goes quiet is read 400 ms at most.
  rule.clientMessage(continuous(1));
  const flood = setInterval(() => source.write('x'), 20);
  await sleep(200);
  assert.equal(reading(), true);
  await sleep(350);
  clearInterval(flood);
  assert.equal(reading(), false, 'stopped at the deadline');
  assert.equal(source.listenerCount('data'), 0, 'nothing left listening');
});

test('shown again before the relay went quiet: the pending stop is cancelled', async () => {
  const { rule, reading } = setup(true);
  rule.setVisible(false);
  rule.setVisible(true);
  await sleep(150);
  assert.equal(reading(), true);
  rule.setVisible(false);
  rule.dispose();
  await sleep(150);
  assert.equal(reading(), true, 'disposed: no stop runs afterwards');
});

test('the input gate tells a view-only viewer\'s resume, and still drops its input', () => {
  const seen: Uint8Array[] = [];
  const gate = new RfbInputGate(() => false, { observe: (m) => seen.push(m) });
  const handshake = [...new TextEncoder().encode('RFB 003.008\n'), 1, 1];
  const key = [4, 1, 0, 0, 0, 0, 0, 0x61];
  const { forward } = gate.push(new Uint8Array([...handshake, ...continuous(1), ...key]));
  assert.deepEqual(seen.filter(isResumeRequest).length, 1, 'the resume is observed');
  const sent = Buffer.concat(forward.map((b) => Buffer.from(b)));
  assert.equal(sent.length, handshake.length + 10, 'the key was dropped: no control');
});
