import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FIRST_FRAME_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS, QUIET_PING_MS, RETRY_DELAYS_MS, STALL_MS, STALL_RECONNECT_MS, SessionWatch,
  type Clock, type SessionView,
} from '../../webview/reconnect';

/** A clock that moves only when the test says so. */
class FakeClock implements Clock {
  time = 1_000_000;
  private timers: Array<{ at: number; every?: number; run: () => void; live: boolean }> = [];

  now(): number {
    return this.time;
  }

  after(ms: number, run: () => void): () => void {
    const timer = { at: this.time + ms, run, live: true };
    this.timers.push(timer);
    return () => void (timer.live = false);
  }

  every(ms: number, run: () => void): () => void {
    const timer = { at: this.time + ms, every: ms, run, live: true };
    this.timers.push(timer);
    return () => void (timer.live = false);
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.time = next.at;
      if (next.every) next.at += next.every;
      else next.live = false;
      next.run();
    }
    this.time = end;
  }
}

function harness() {
  const clock = new FakeClock();
  const calls: string[] = [];
  const views: SessionView[] = [];
  const logs: string[] = [];
  let watch: SessionWatch;
  watch = new SessionWatch(clock, {
    connect: () => calls.push('connect'),
    drop: () => {
      calls.push('drop');
      watch.closed();
    },
    fullRefresh: () => calls.push('fullRefresh'),
    ping: () => calls.push('ping'),
    log: (message) => logs.push(message),
    changed: (view) => views.push(view),
  });
  const count = (call: string) => calls.filter((c) => c === call).length;
  return { clock, watch, calls, views, logs, count };
}

test('retries back off 0.5, 1, 2, 4, 8, 10, 10 s while no session draws, and say which attempt', () => {
  const { clock, watch, views, count } = harness();
  watch.start();
  assert.equal(count('connect'), 1);
  assert.deepEqual(watch.view, { kind: 'connecting', attempt: 0 });
  const waits: number[] = [];
  for (let i = 1; i <= 7; i++) {
    watch.closed();
    const view: SessionView = watch.view;
    assert.equal(view.kind, 'waiting');
    assert.equal(view.kind === 'waiting' && view.attempt, i);
    waits.push(view.kind === 'waiting' ? view.delayMs : -1);
    const delay = waits.at(-1) ?? 0;
    clock.advance(delay - 1);
    assert.equal(count('connect'), i, `retry ${i} not before its delay`);
    clock.advance(1);
    assert.equal(count('connect'), i + 1, `retry ${i} after ${delay} ms`);
    assert.deepEqual(watch.view, { kind: 'connecting', attempt: i });
  }
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
  assert.deepEqual(RETRY_DELAYS_MS.at(-1), 10_000);
  assert.ok(views.some((v) => v.kind === 'waiting' && v.attempt === 7));
});

test('a session that drew frames resets the backoff: every drop of a working session retries after 0.5 s', () => {
  const { clock, watch, count } = harness();
  watch.start();
  live(watch);
  for (let i = 0; i < 10; i++) {
    watch.closed();
    assert.deepEqual(watch.view, { kind: 'waiting', attempt: 1, delayMs: 500 });
    clock.advance(500);
    assert.equal(count('connect'), i + 2);
    live(watch);
    assert.deepEqual(watch.view, { kind: 'live' });
  }
});

test('a session that connects but draws nothing counts as failed: the next retry waits longer', () => {
  const { clock, watch, count } = harness();
  watch.start();
  watch.opened();
  watch.connected();
  watch.closed(); // no frame drawn
  clock.advance(500);
  watch.opened();
  watch.connected();
  watch.closed();
  assert.deepEqual(watch.view, { kind: 'waiting', attempt: 2, delayMs: 1000 });
  assert.equal(count('connect'), 2);
});

test('stop ends every retry: a screen that stopped or whose sandbox is gone is final', () => {
  const { clock, watch, count } = harness();
  watch.start();
  watch.closed();
  watch.stop();
  clock.advance(60_000);
  assert.equal(count('connect'), 1);
  assert.deepEqual(watch.view, { kind: 'idle' });
  watch.closed(); // a late close of the old session changes nothing
  clock.advance(60_000);
  assert.equal(count('connect'), 1);
});

test('a black screen is asked once for a full update, logged, and logged again if it stays black', () => {
  const { clock, watch, logs, count } = harness();
  watch.start();
  watch.opened();
  watch.connected();
  clock.advance(FIRST_FRAME_TIMEOUT_MS - 500);
  assert.equal(count('fullRefresh'), 0);
  clock.advance(500);
  assert.equal(count('fullRefresh'), 1);
  assert.match(logs.join('\n'), /black screen: connected 5 s ago but nothing drawn/);
  clock.advance(FIRST_FRAME_TIMEOUT_MS - 500);
  assert.equal(count('fullRefresh'), 1, 'the full request is sent once');
  assert.equal(count('drop'), 0);
  clock.advance(500);
  assert.match(logs.at(-1) ?? '', /still nothing drawn 5 s after the full framebuffer request/);
  clock.advance(60_000);
  assert.equal(count('fullRefresh'), 1, 'retried once only');
  assert.equal(logs.filter((l) => /still nothing drawn/.test(l)).length, 1, 'said once');
  assert.equal(count('drop'), 0, 'the session (its relay alive) stays for a late first frame');
  watch.frameDrawn();
  assert.deepEqual(watch.view, { kind: 'live' });
});

test('a black screen that draws after the full request is live, and says so in the log', () => {
  const { clock, watch, logs, count } = harness();
  watch.start();
  watch.opened();
  watch.connected();
  clock.advance(FIRST_FRAME_TIMEOUT_MS);
  watch.frameDrawn();
  assert.deepEqual(watch.view, { kind: 'live' });
  assert.match(logs.at(-1) ?? '', /drew after the full framebuffer request/);
  for (let i = 0; i < 60; i++) {
    clock.advance(1000);
    watch.dataReceived();
  }
  assert.equal(count('drop'), 0);
  assert.equal(count('fullRefresh'), 1);
});

test('a relay the host never answers is given up and retried', () => {
  const { clock, watch, logs, count } = harness();
  watch.start();
  clock.advance(HANDSHAKE_TIMEOUT_MS);
  assert.equal(count('drop'), 1);
  assert.match(logs.at(-1) ?? '', /no relay within 10 s/);
  assert.equal(watch.opened(), false, 'the late answer to the request given up on is not used');
  clock.advance(499);
  assert.equal(watch.opened(), false, 'nor while the next one is not yet asked for');
  clock.advance(1);
  assert.equal(count('connect'), 2);
  assert.equal(watch.opened(), true);
});

test('a handshake that never finishes is given up and retried', () => {
  const { clock, watch, count } = harness();
  watch.start();
  watch.opened();
  clock.advance(HANDSHAKE_TIMEOUT_MS);
  assert.equal(count('drop'), 1);
  assert.equal(watch.view.kind, 'waiting');
});

test('a quiet link is pinged, shown as stalled with the seconds counting, and recovers when data flows', () => {
  const { clock, watch, views, logs, count } = harness();
  watch.start();
  live(watch);
  clock.advance(QUIET_PING_MS);
  assert.equal(count('ping'), 1, 'a quiet link is pinged after 2 s');
  watch.dataReceived(); // the ping's answer: a static screen is healthy
  clock.advance(STALL_MS - 500);
  assert.deepEqual(watch.view, { kind: 'live' }, 'a ping answered keeps the view live');
  // Now the relay is blocked: nothing arrives.
  watch.dataReceived();
  clock.advance(STALL_MS);
  assert.deepEqual(watch.view, { kind: 'stalled', seconds: 5 });
  clock.advance(10_000);
  assert.deepEqual(watch.view, { kind: 'stalled', seconds: 15 });
  assert.ok(views.some((v) => v.kind === 'stalled' && v.seconds === 10), 'the seconds count up');
  assert.ok(count('ping') >= 7, 'pings go on every 2 s while quiet');
  watch.dataReceived();
  assert.deepEqual(watch.view, { kind: 'live' });
  assert.match(logs.at(-1) ?? '', /data from the screen again after 15 s/);
  assert.equal(count('drop'), 0, 'a 15 s stall does not replace the session');
});

test('a link stalled for 30 s is replaced', () => {
  const { clock, watch, count } = harness();
  watch.start();
  live(watch);
  clock.advance(STALL_RECONNECT_MS);
  assert.equal(count('drop'), 1);
  assert.equal(watch.view.kind, 'waiting');
});

test('while hidden nothing times out; shown again, the clocks restart', () => {
  const { clock, watch, count } = harness();
  watch.start();
  live(watch);
  watch.setVisible(false);
  clock.advance(120_000);
  assert.equal(count('ping'), 0);
  assert.equal(count('drop'), 0);
  assert.deepEqual(watch.view, { kind: 'live' });
  watch.setVisible(true);
  clock.advance(STALL_MS - 1000);
  assert.deepEqual(watch.view, { kind: 'live' });
});

/** Opens a session up to its first drawn frame. */
function live(watch: SessionWatch): void {
  watch.opened();
  watch.connected();
  watch.frameDrawn();
}
