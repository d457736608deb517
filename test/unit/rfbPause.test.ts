import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RfbPause, type PausableSession } from '../../webview/rfbPause';

/** A session as noVNC 1.7 presents it to the pause, recording what is sent to the server. */
function session(continuousUpdates: boolean, width = 1280, height = 800): PausableSession & { sent: number[][] } {
  const sent: number[][] = [];
  return { sent, send: (m) => void sent.push([...m]), continuousUpdates, width, height };
}

const incremental = new Uint8Array([3, 1, 0, 0, 0, 0, 5, 0, 3, 32]);

test('pausing turns continuous updates off for the whole screen; resuming turns them on, and asks for nothing more', () => {
  const s = session(true);
  const pause = new RfbPause(s);
  pause.pause();
  assert.deepEqual(s.sent, [[150, 0, 0, 0, 0, 0, 5, 0, 3, 32]]);
  // The server's EndOfContinuousUpdates makes noVNC ask after each update from then on.
  s.continuousUpdates = false;
  assert.equal(pause.holds(incremental), true, 'noVNC\'s own request is held back while paused');
  pause.resume();
  // The server sends what changed meanwhile on its own (it tracks each client's changes): no
  // request for the whole screen, which the view still shows.
  assert.deepEqual(s.sent.slice(1), [[150, 1, 0, 0, 0, 0, 5, 0, 3, 32]]);
  assert.equal(s.continuousUpdates, true, 'noVNC runs continuous updates again, asking for nothing itself');
  assert.equal(pause.holds(incremental), false, 'shown: requests pass');
  assert.deepEqual(pause.stats, { pauses: 1, heldRequests: 1 });
});

test('without continuous updates, pausing holds back noVNC\'s requests and resuming sends one incremental request', () => {
  const s = session(false, 1920, 1080);
  const pause = new RfbPause(s);
  pause.pause();
  assert.deepEqual(s.sent, [], 'nothing to turn off');
  assert.equal(pause.holds(incremental), true);
  pause.resume();
  assert.deepEqual(s.sent, [[3, 1, 0, 0, 0, 0, 0x07, 0x80, 0x04, 0x38]], 'what changed meanwhile, as noVNC would have asked');
  assert.equal(s.continuousUpdates, false, 'left as it was');
});

test('only incremental update requests are held back: input, full requests and larger writes pass', () => {
  const pause = new RfbPause(session(true));
  pause.pause();
  assert.equal(pause.holds(new Uint8Array([4, 1, 0, 0, 0, 0, 0xff, 0x0d])), false, 'a key event');
  assert.equal(pause.holds(new Uint8Array([5, 0, 0, 10, 0, 20])), false, 'a pointer event');
  assert.equal(pause.holds(new Uint8Array([3, 0, 0, 0, 0, 0, 0, 1, 0, 1])), false, 'the watch\'s ping (a full request)');
  assert.equal(pause.holds(new Uint8Array([...incremental, 4, 1, 0, 0, 0, 0, 0, 0x61])), false, 'a request inside a larger write');
});

test('before the handshake there is nothing to pause; pause and resume are idempotent', () => {
  const early = session(false, 0, 0);
  const p0 = new RfbPause(early);
  p0.pause();
  assert.equal(p0.isPaused, false);
  assert.equal(p0.holds(incremental), false);
  p0.resume();
  assert.deepEqual(early.sent, []);

  const s = session(true);
  const pause = new RfbPause(s);
  pause.resume();
  assert.deepEqual(s.sent, [], 'resume without a pause sends nothing');
  pause.pause();
  pause.pause();
  assert.equal(s.sent.length, 1, 'a second hide sends nothing more');
  pause.resume();
  pause.resume();
  assert.equal(s.sent.length, 2, 'a second show sends nothing more');
});
