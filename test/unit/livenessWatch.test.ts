// The liveness watch (src/core/livenessWatch.ts): with an event stream nothing is asked until an
// event, the stream's end or checkNow; without one the poll's interval doubles while the answer
// stays the same. Event streams are stand-ins here (and one real process, to prove dispose ends
// it); test/integration/liveness-events.test.ts runs the real `docker events`.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { Liveness } from '../../src/core/backends/backend';
import type { Command } from '../../src/core/command';
import { LivenessWatch } from '../../src/core/livenessWatch';
import { openStream, type EventCommand, type StreamProcess } from '../../src/core/runner';
import { testLog } from '../support/env';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await sleep(2);
  }
}

/** A stand-in event stream: lines are pushed by the test, `end` makes it exit. */
class FakeStream implements StreamProcess {
  readonly pid = 1;
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly exited: Promise<{ exitCode: number | null; stderr: string }>;
  killed = false;
  private finish!: (value: { exitCode: number | null; stderr: string }) => void;

  constructor(readonly command: Command) {
    this.exited = new Promise((resolve) => (this.finish = resolve));
  }

  line(text: string): void {
    this.stdout.write(`${text}\n`);
  }

  end(exitCode: number, stderr = ''): void {
    this.finish({ exitCode, stderr });
  }

  kill(): void {
    this.killed = true;
    this.finish({ exitCode: null, stderr: '' });
  }
}

const eventsCommand = (since: number): EventCommand<string> => ({
  command: 'fake-events',
  args: ['--since', `${since}s`],
  parseLine: (line) => (line === 'die' ? 'stopped' : undefined),
});

function eventRig(answer: () => Liveness = () => 'alive') {
  const streams: FakeStream[] = [];
  const checks: number[] = [];
  const started = Date.now();
  const watch = new LivenessWatch({
    check: async () => {
      checks.push(Date.now() - started);
      return answer();
    },
    events: eventsCommand,
    restartMs: 30,
    maxRestartMs: 120,
    log: testLog,
    open: (cmd) => {
      const stream = new FakeStream(cmd);
      streams.push(stream);
      return stream;
    },
  });
  return { watch, streams, checks };
}

test('with an event stream nothing is asked while nothing happens; an event asks once', async () => {
  const { watch, streams, checks } = eventRig();
  try {
    assert.equal(streams.length, 1, 'one stream per watch');
    assert.match(streams[0].command.args[1], /^[23]s$/, 'replays from just before the start');
    await sleep(300);
    assert.deepEqual(checks, [], 'no check while idle: no poll at all');
    streams[0].line('exec_die');
    streams[0].line('something else');
    await sleep(50);
    assert.deepEqual(checks, [], 'lines that are not stop events ask nothing');
    streams[0].stdout.write('di');
    await sleep(20);
    assert.deepEqual(checks, [], 'half a line is not an event yet');
    streams[0].stdout.write('e\n');
    await until('the check an event asks for', () => checks.length === 1);
    await sleep(100);
    assert.equal(checks.length, 1);
    assert.equal(streams.length, 1, 'the stream keeps running');
  } finally {
    watch.dispose();
  }
});

test('a stream that ends asks at once and listens again, replaying the gap, with a growing delay while it keeps ending', async () => {
  let answer: Liveness = 'unknown';
  const { watch, streams, checks } = eventRig(() => answer);
  try {
    streams[0].end(1, 'Cannot connect to the Docker daemon');
    await until('the check after the stream ended', () => checks.length === 1);
    await until('a second stream', () => streams.length === 2);
    const gaps: number[] = [];
    let last = Date.now();
    for (let n = 2; n <= 4; n++) {
      streams[n - 1].end(1);
      await until(`stream ${n + 1}`, () => streams.length === n + 1);
      gaps.push(Date.now() - last);
      last = Date.now();
    }
    console.log(`# restart delays while the stream keeps ending: ${gaps.join(', ')} ms (first 30, doubling to 120)`);
    assert.ok(gaps[1] >= 55 && gaps[2] >= 110, `the delay grows: ${gaps.join(', ')}`);
    assert.equal(checks.length, 4, 'each end asked once');
    // Nothing was found alive since the watch began: the replay window covers all of it.
    const since = Number(streams[4].command.args[1].replace('s', ''));
    assert.ok(since >= 2, `since ${since}`);
    answer = 'alive';
    streams[4].end(1);
    await until('a check that finds it alive', () => checks.length === 5);
    await until('stream 6', () => streams.length === 6);
    assert.deepEqual(streams[5].command.args, ['--since', '3s'], 'after an alive answer the replay window is short again');
  } finally {
    watch.dispose();
  }
});

test('dispose kills the stream and nothing restarts', async () => {
  const { watch, streams, checks } = eventRig();
  watch.dispose();
  assert.equal(streams[0].killed, true);
  await sleep(150);
  assert.equal(streams.length, 1, 'no restart after dispose');
  assert.deepEqual(checks, [], 'a killed stream asks nothing');
  watch.checkNow();
  await sleep(20);
  assert.deepEqual(checks, []);
});

test('dispose ends a real event process (no process is left behind)', async () => {
  let pid: number | undefined;
  const watch = new LivenessWatch({
    check: async () => 'alive',
    events: () => ({ command: 'sh', args: ['-c', 'echo ready; exec sleep 60'], parseLine: () => undefined }),
    log: testLog,
    open: (cmd) => {
      const stream = openStream(cmd);
      pid = stream.pid;
      return stream;
    },
  });
  assert.ok(pid, 'the stream runs as a process');
  await sleep(100);
  assert.doesNotThrow(() => process.kill(pid!, 0), 'running while watched');
  watch.dispose();
  await until('the event process to end', () => {
    try {
      process.kill(pid!, 0);
      return false;
    } catch {
      return true;
    }
  });
});

test('without events the poll doubles its interval while the answer stays the same; checkNow starts it over', async () => {
  const checks: number[] = [];
  let answer: Liveness = 'alive';
  const started = Date.now();
  const watch = new LivenessWatch({
    check: async () => {
      checks.push(Date.now() - started);
      return answer;
    },
    pollMs: 40,
    maxPollMs: 160,
    log: testLog,
  });
  try {
    await until('five polls', () => checks.length >= 5, 10_000);
    const gaps = checks.slice(1, 5).map((at, i) => at - checks[i]);
    console.log(`# poll times ${checks.slice(0, 5).join(', ')} ms: gaps ${gaps.join(', ')} (40, doubling to 160)`);
    assert.ok(checks[0] >= 35, `the first poll waits its interval (${checks[0]} ms)`);
    assert.ok(gaps[0] >= 75 && gaps[1] >= 150 && gaps[2] >= 150, `the interval grows and stops at the cap: ${gaps.join(', ')}`);
    assert.ok(gaps[2] < 400, `it stops growing at the cap: ${gaps.join(', ')}`);
    // A failed exec: asked at once, and the interval is the first one again.
    const before = checks.length;
    const at = Date.now() - started;
    watch.checkNow();
    await until('the check asked for', () => checks.length === before + 1);
    assert.ok(checks[before] - at < 100, `asked at once (${checks[before] - at} ms)`);
    await until('the next poll', () => checks.length === before + 2, 2_000);
    assert.ok(checks[before + 1] - checks[before] < 120, `the next poll came after the first interval, not the grown one (${checks[before + 1] - checks[before]} ms)`);
    // A changed answer starts the backoff over as well.
    await until('the interval to grow again', () => checks.length === before + 4, 2_000);
    answer = 'unknown';
    const changed = checks.length;
    await until('polls after the change', () => checks.length >= changed + 2, 2_000);
    const afterChange = checks[changed + 1] - checks[changed];
    assert.ok(afterChange < 100, `after a changed answer the next poll came after the first interval (${afterChange} ms)`);
  } finally {
    watch.dispose();
  }
  const count = checks.length;
  await sleep(400);
  assert.equal(checks.length, count, 'nothing after dispose');
});

test('checks asked for while one runs are folded into one more', async () => {
  let running = 0;
  let most = 0;
  let calls = 0;
  const watch = new LivenessWatch({
    check: async () => {
      calls++;
      running++;
      most = Math.max(most, running);
      await sleep(50);
      running--;
      return 'alive';
    },
    pollMs: 60_000,
    log: testLog,
  });
  try {
    for (let i = 0; i < 10; i++) {
      watch.checkNow();
    }
    await sleep(250);
    assert.equal(most, 1, 'never two at once');
    assert.equal(calls, 2, 'the first, and one for everything asked meanwhile');
  } finally {
    watch.dispose();
  }
});
