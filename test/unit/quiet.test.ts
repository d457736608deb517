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
