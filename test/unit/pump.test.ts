import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { RfbPump } from '../../src/core/pump';

const tick = () => new Promise((resolve) => setImmediate(resolve));

function harness(options = { maxInFlight: 4, resumeInFlight: 1, maxPostBytes: 1024 }) {
  const source = new PassThrough();
  const posts: Uint8Array[] = [];
  const pending: Array<() => void> = [];
  const pump = new RfbPump(
    source,
    (data) => {
      posts.push(data);
      return new Promise<boolean>((resolve) => pending.push(() => resolve(true)));
    },
    options,
  );
  const answer = (n = pending.length) => pending.splice(0, n).forEach((resolve) => resolve());
  return { source, posts, pump, answer };
}

test('small chunks read in one turn are coalesced into one exact-size post', async () => {
  const { source, posts } = harness();
  for (let i = 0; i < 10; i++) {
    source.write(Buffer.from([i, i]));
  }
  await tick();
  await tick();
  assert.equal(posts.length, 1);
  assert.deepEqual([...posts[0]], [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9]);
  assert.equal(posts[0].byteOffset, 0);
  assert.equal(posts[0].buffer.byteLength, posts[0].byteLength, 'no pooled backing store travels along');
});

test('large backlogs are split at maxPostBytes, bytes in order', async () => {
  const { source, posts } = harness({ maxInFlight: 100, resumeInFlight: 1, maxPostBytes: 1000 });
  const data = Buffer.alloc(3500, 0).map((_, i) => i % 251);
  source.write(data);
  await tick();
  await tick();
  assert.deepEqual(posts.map((p) => p.length), [1000, 1000, 1000, 500]);
  assert.deepEqual(Buffer.concat(posts), data);
});

test('when the webview lags the source is paused, and resumed once posts are answered', async () => {
  const { source, posts, pump, answer } = harness({ maxInFlight: 2, resumeInFlight: 0, maxPostBytes: 10 });
  source.write(Buffer.alloc(50, 1));
  await tick();
  await tick();
  assert.equal(posts.length, 2);
  assert.ok(source.isPaused(), 'paused at maxInFlight');
  answer();
  await tick();
  await tick();
  assert.equal(posts.length, 4);
  answer();
  await tick();
  answer();
  await tick();
  await tick();
  assert.equal(Buffer.concat(posts).length, 50);
  answer();
  await tick();
  assert.ok(!source.isPaused(), 'resumed after the backlog drained');
  assert.ok(pump.stats.pauses >= 1);
});

test('hidden: nothing is posted and the source is not read; shown again: the held bytes go out', async () => {
  const { source, posts, pump } = harness();
  pump.setVisible(false);
  source.write(Buffer.from('abc'));
  await tick();
  await tick();
  assert.equal(posts.length, 0);
  assert.ok(source.isPaused());
  pump.setVisible(true);
  await tick();
  await tick();
  assert.equal(Buffer.concat(posts).toString(), 'abc');
});
