// The thumbnail scheduler with a fake clock and fake grabs: no grab while hidden, one grab in
// flight per screen, the interval between grabs, backoff after failures, dropped screens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ThumbnailScheduler, type GrabOutcome, type SchedulerClock } from '../../src/core/thumbnailScheduler';

class FakeClock implements SchedulerClock {
  time = 0;
  private next = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward, running each timer when its time comes (and what its promises do). */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    await flush();
    for (;;) {
      const due = [...this.timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) {
        break;
      }
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
      await flush();
    }
    this.time = end;
  }
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A grab whose every call is recorded and ends only when the test says so. */
function controlledGrab() {
  const calls: { at: number; resolve(value: string): void; reject(error: Error): void }[] = [];
  let clock: FakeClock | undefined;
  const grab = () =>
    new Promise<string>((resolve, reject) => {
      calls.push({ at: clock?.now() ?? -1, resolve, reject });
    });
  return { calls, grab, use: (c: FakeClock) => (clock = c) };
}

function setup(options: { intervalMs?: number; maxBackoffMs?: number } = {}) {
  const clock = new FakeClock();
  const scheduler = new ThumbnailScheduler<string>({ intervalMs: options.intervalMs ?? 3000, maxBackoffMs: options.maxBackoffMs ?? 60_000, clock });
  const results: [string, GrabOutcome<string>][] = [];
  scheduler.onResult((key, outcome) => results.push([key, outcome]));
  return { clock, scheduler, results };
}

test('nothing is grabbed while hidden; showing grabs at once, then once per interval after each grab ends', async () => {
  const { clock, scheduler, results } = setup();
  const a = controlledGrab();
  a.use(clock);
  scheduler.setTargets(new Map([['a', a.grab]]));
  await clock.advance(60_000);
  assert.equal(a.calls.length, 0, 'hidden: no grab');
  assert.equal(clock.pending, 0, 'hidden: not even a timer');

  scheduler.setVisible(true);
  await clock.advance(0);
  assert.equal(a.calls.length, 1, 'shown: a grab at once');
  await clock.advance(10_000);
  assert.equal(a.calls.length, 1, 'one grab in flight: no second one however long the first takes');
  assert.ok(scheduler.inFlight('a'));

  a.calls[0].resolve('picture 1');
  await clock.advance(0);
  assert.deepEqual(results, [['a', { ok: true, value: 'picture 1' }]]);
  assert.equal(scheduler.inFlight('a'), false);
  await clock.advance(2999);
  assert.equal(a.calls.length, 1, 'the next grab waits the interval after the last one ended');
  await clock.advance(1);
  assert.equal(a.calls.length, 2);
  assert.equal(a.calls[1].at, 73_000, 'shown at 60 s, the first grab ended at 70 s');
  scheduler.dispose();
});

test('hiding stops every pending grab; a grab running then ends and is reported, and none starts until shown again', async () => {
  const { clock, scheduler, results } = setup();
  const a = controlledGrab();
  const b = controlledGrab();
  scheduler.setTargets(
    new Map([
      ['a', a.grab],
      ['b', b.grab],
    ]),
  );
  scheduler.setVisible(true);
  await clock.advance(0);
  assert.deepEqual([a.calls.length, b.calls.length], [1, 1], 'each screen is grabbed, independently');
  a.calls[0].resolve('a1');
  await clock.advance(1000);
  scheduler.setVisible(false);
  assert.equal(clock.pending, 0, 'hidden: no timer left');
  b.calls[0].resolve('b1'); // was running when the tree was hidden
  await clock.advance(60_000);
  assert.deepEqual(
    results.map(([key]) => key),
    ['a', 'b'],
  );
  assert.deepEqual([a.calls.length, b.calls.length], [1, 1], 'nothing grabbed while hidden');

  scheduler.setVisible(true);
  await clock.advance(0);
  assert.deepEqual([a.calls.length, b.calls.length], [2, 2], 'both were due: grabbed as soon as shown');
  scheduler.dispose();
});

test('shown again before the next grab is due: it waits for its time, not at once', async () => {
  const { clock, scheduler } = setup();
  const a = controlledGrab();
  scheduler.setTargets(new Map([['a', a.grab]]));
  scheduler.setVisible(true);
  await clock.advance(0);
  a.calls[0].resolve('a1');
  await clock.advance(1000);
  scheduler.setVisible(false);
  scheduler.setVisible(true);
  await clock.advance(1999);
  assert.equal(a.calls.length, 1);
  await clock.advance(1);
  assert.equal(a.calls.length, 2, 'at the interval after the last grab');
  scheduler.dispose();
});

test('failures back off (doubling up to the bound); a success returns to the interval', async () => {
  const { clock, scheduler, results } = setup({ intervalMs: 1000, maxBackoffMs: 5000 });
  const a = controlledGrab();
  a.use(clock);
  scheduler.setTargets(new Map([['a', a.grab]]));
  scheduler.setVisible(true);
  await clock.advance(0);
  const gaps: number[] = [];
  for (let i = 0; i < 5; i++) {
    const call = a.calls.at(-1)!;
    call.reject(new Error(`no display ${i}`));
    const failedAt = clock.now();
    await clock.advance(10_000);
    gaps.push(a.calls.at(-1)!.at - failedAt);
    clock.time = a.calls.at(-1)!.at; // back to the moment the grab started
  }
  assert.deepEqual(gaps, [2000, 4000, 5000, 5000, 5000]);
  assert.deepEqual(
    results.map(([, o]) => (o.ok ? 0 : o.failures)),
    [1, 2, 3, 4, 5],
  );
  a.calls.at(-1)!.resolve('back');
  const okAt = clock.now();
  await clock.advance(10_000);
  assert.equal(a.calls.at(-1)!.at - okAt, 1000, 'a success resets the backoff');
  scheduler.dispose();
});

test('an unchanged picture is not reported and the next grab waits twice as long (up to a bound); a new picture or a failure brings the interval back', async () => {
  const clock = new FakeClock();
  const scheduler = new ThumbnailScheduler<string>({ intervalMs: 1000, maxUnchangedMs: 8000, same: (a, b) => a === b, clock });
  const results: [string, GrabOutcome<string>][] = [];
  scheduler.onResult((key, outcome) => results.push([key, outcome]));
  const a = controlledGrab();
  a.use(clock);
  scheduler.setTargets(new Map([['a', a.grab]]));
  scheduler.setVisible(true);
  await clock.advance(0);
  /** Ends the running grab with `answer` and returns the wait until the next one starts. */
  const gapAfter = async (answer: string | Error): Promise<number> => {
    const call = a.calls.at(-1)!;
    if (answer instanceof Error) {
      call.reject(answer);
    } else {
      call.resolve(answer);
    }
    const endedAt = clock.now();
    const before = a.calls.length;
    await clock.advance(60_000);
    assert.equal(a.calls.length, before + 1, 'exactly one more grab');
    clock.time = a.calls.at(-1)!.at;
    return a.calls.at(-1)!.at - endedAt;
  };
  const gaps = [];
  for (const answer of ['idle', 'idle', 'idle', 'idle', 'idle', 'idle', 'moved', 'moved']) {
    gaps.push(await gapAfter(answer));
  }
  assert.deepEqual(gaps, [1000, 2000, 4000, 8000, 8000, 8000, 1000, 2000], 'doubling while the same, back to the interval on a change');
  assert.deepEqual(
    results.map(([, o]) => (o.ok ? o.value : 'failed')),
    ['idle', 'moved'],
    'only new pictures are reported',
  );
  assert.equal(await gapAfter(new Error('no display')), 2000, 'a failure backs off as failures do');
  assert.equal(await gapAfter('moved'), 1000, 'the first picture after a failure is reported, even when it is the last one seen');
  assert.deepEqual(
    results.map(([, o]) => (o.ok ? o.value : 'failed')),
    ['idle', 'moved', 'failed', 'moved'],
  );
  scheduler.dispose();
});

test('a grab that throws at once counts as a failure, not a crash; it is retried later', async () => {
  const { clock, scheduler, results } = setup({ intervalMs: 1000 });
  let calls = 0;
  scheduler.setTargets(
    new Map([
      [
        'a',
        () => {
          calls++;
          throw new Error('no sandbox');
        },
      ],
    ]),
  );
  scheduler.setVisible(true);
  await clock.advance(0);
  assert.equal(calls, 1);
  assert.equal(results.length, 1);
  assert.equal(results[0][1].ok, false);
  await clock.advance(2000);
  assert.equal(calls, 2);
  scheduler.dispose();
});

test('a screen dropped from the targets is no longer grabbed, and its running grab is not reported', async () => {
  const { clock, scheduler, results } = setup();
  const a = controlledGrab();
  const b = controlledGrab();
  scheduler.setTargets(
    new Map([
      ['a', a.grab],
      ['b', b.grab],
    ]),
  );
  scheduler.setVisible(true);
  await clock.advance(0);
  scheduler.setTargets(new Map([['b', b.grab]]));
  a.calls[0].resolve('late');
  b.calls[0].resolve('b1');
  await clock.advance(30_000);
  assert.deepEqual(
    results.filter(([key]) => key === 'a'),
    [],
  );
  assert.equal(a.calls.length, 1, 'a is not grabbed again');
  assert.ok(b.calls.length > 1, 'b goes on');
  // The same key again is a new screen: grabbed at once.
  scheduler.setTargets(
    new Map([
      ['a', a.grab],
      ['b', b.grab],
    ]),
  );
  await clock.advance(0);
  assert.equal(a.calls.length, 2);
  scheduler.dispose();
  assert.equal(clock.pending, 0, 'dispose leaves no timer');
});
