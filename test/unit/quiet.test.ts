import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { whenQuiet } from '../../src/core/quiet';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('runs once the stream has been quiet for quietMs; data meanwhile postpones it', async () => {
  const source = new PassThrough();
  source.resume();
  let ranAt = 0;
  const start = Date.now();
  // Generous times: a loaded machine delays timers by tens of milliseconds.
  whenQuiet(source, 400, 10_000, () => (ranAt = Date.now()));
  let lastAt = start;
  for (let i = 0; i < 4; i++) {
    await sleep(50);
    source.write('x');
    lastAt = Date.now();
  }
  assert.equal(ranAt, 0, 'not while data flows');
  await sleep(800);
  assert.ok(ranAt >= lastAt + 400, `after the last chunk and the quiet time (ran ${ranAt - lastAt} ms after it)`);
  assert.equal(source.listenerCount('data'), 0, 'its listener is gone again');
});

test('runs at the deadline when the stream never goes quiet, and only once', async () => {
  const source = new PassThrough();
  source.resume();
  let runs = 0;
  whenQuiet(source, 80, 200, () => runs++);
  const flood = setInterval(() => source.write('x'), 20);
  await sleep(300);
  clearInterval(flood);
  await sleep(150);
  assert.equal(runs, 1);
});

test('cancelled, it never runs; no stream runs it after the quiet time', async () => {
  const source = new PassThrough();
  let runs = 0;
  const cancel = whenQuiet(source, 30, 60, () => runs++);
  cancel();
  cancel();
  await sleep(100);
  assert.equal(runs, 0);
  assert.equal(source.listenerCount('data'), 0);
  whenQuiet(undefined, 30, 1000, () => runs++);
  await sleep(80);
  assert.equal(runs, 1);
});

test('a stream its reader paused is held, not quiet: it runs once the stream flowed and went quiet, or at the deadline', async () => {
  const source = new PassThrough();
  source.resume();
  let ranAt = 0;
  whenQuiet(source, 60, 10_000, () => (ranAt = Date.now()));
  source.pause(); // the pump waits for the webview: bytes stay behind in the pipe
  await sleep(300);
  assert.equal(ranAt, 0, 'not while paused');
  const resumedAt = Date.now();
  source.resume();
  await sleep(400);
  assert.ok(ranAt >= resumedAt, 'after the stream flowed again');
  let atDeadline = 0;
  const held = new PassThrough();
  held.pause();
  whenQuiet(held, 30, 200, () => (atDeadline = Date.now()));
  const start = Date.now();
  await sleep(500);
  assert.ok(atDeadline >= start + 150, 'a stream held for good stops at the deadline');
});
