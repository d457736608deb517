import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import {
  HumanHasControlError,
  type Lease,
  LeaseLockError,
  LeaseStore,
  MAX_EPOCH,
  publicView,
  UNREADABLE_VIEWER,
  viewerHash,
} from '../../src/core/lease';

// This bundled file is also the worker of the two-process test: with the env flag set it runs
// the worker loop instead of registering tests.
const WORKER_FLAG = 'BOT_SCREEN_LEASE_WORKER';

if (process.env[WORKER_FLAG]) {
  runWorker();
} else {
  registerTests();
}

/** Waits for "go" on stdin, then alternates acquire/release; prints each real transition. */
function runWorker(): void {
  const [dir, key, viewer, rounds] = JSON.parse(process.env[WORKER_FLAG]!) as [string, string, string, number];
  const store = new LeaseStore(dir, key, { lockTimeoutMs: 20_000 });
  const lines: string[] = [];
  store.onTransition((lease, previous) => lines.push(JSON.stringify({ epoch: lease.epoch, previous: previous.epoch, holder: lease.holder })));
  process.stdout.write('ready\n');
  createInterface({ input: process.stdin }).once('line', () => {
    const seen: number[] = [];
    for (let i = 0; i < rounds; i++) {
      seen.push(store.acquire(viewer, `round ${i}`).epoch);
      seen.push(store.release(viewer).epoch);
    }
    process.stdout.write(JSON.stringify({ transitions: lines.map((l) => JSON.parse(l)), seen }) + '\n');
    process.exit(0);
  });
}

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bot-screen-lease-'));
}

function registerTests(): void {
  test('a missing file means the agent holds at epoch 0, and reading creates nothing', () => {
    const dir = tempDir();
    const store = new LeaseStore(path.join(dir, 'sub'), 'profile');
    const lease = store.read();
    assert.equal(lease.holder, 'agent');
    assert.equal(lease.epoch, 0);
    assert.equal(lease.viewerId, undefined);
    assert.equal(fs.existsSync(path.join(dir, 'sub')), false);
    assert.equal(store.assertAgentMayAct().epoch, 0);
    assert.equal(store.viewerMayInput('v1'), false);
  });

  test('every transition bumps the epoch by one; no-ops do not', () => {
    const dir = tempDir();
    const store = new LeaseStore(dir, 'k');
    const transitions: Array<[number, number]> = [];
    store.onTransition((lease, previous) => transitions.push([previous.epoch, lease.epoch]));

    const a = store.acquire('viewer-a', 'fixing the login');
    assert.deepEqual([a.holder, a.viewerId, a.reason, a.epoch], ['human', 'viewer-a', 'fixing the login', 1]);
    assert.ok(!Number.isNaN(Date.parse(a.since)));

    // the holder taking it again: no bump, the reason kept
    const again = store.acquire('viewer-a', 'something else');
    assert.deepEqual(again, a);
    assert.deepEqual(store.read(), a);

    // last writer wins
    const b = store.acquire('viewer-b', 'my turn');
    assert.deepEqual([b.viewerId, b.epoch], ['viewer-b', 2]);
    assert.equal(store.viewerMayInput('viewer-a'), false);
    assert.equal(store.viewerMayInput('viewer-b'), true);

    // a non-holder's release and a bare release are ignored
    assert.equal(store.release('viewer-a').epoch, 2);
    assert.equal(store.release().epoch, 2);
    assert.equal(store.read().holder, 'human');

    // the holder hands back
    const back = store.release('viewer-b');
    assert.deepEqual([back.holder, back.viewerId, back.epoch], ['agent', undefined, 3]);
    // already the agent: no bump, even forced
    assert.equal(store.release('viewer-b').epoch, 3);
    assert.equal(store.release(undefined, { force: true }).epoch, 3);

    // forced release by someone who is not the holder
    store.acquire('viewer-c', 'x');
    const forced = store.release(undefined, { force: true, reason: 'stop button' });
    assert.deepEqual([forced.holder, forced.epoch, forced.reason], ['agent', 5, 'stop button']);

    assert.deepEqual(transitions, [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]);
    // a second store (another window) sees the same record
    assert.deepEqual(new LeaseStore(dir, 'k').read(), store.read());
    assert.deepEqual(fs.readdirSync(dir).sort(), ['lease-k.json'], 'no tmp or lock files left');
  });

  test('the agent is refused while a human holds, and an epoch change voids an action', () => {
    const store = new LeaseStore(tempDir(), 'k');
    const start = store.assertAgentMayAct();
    store.acquire('viewer-a', 'let me');
    assert.throws(() => store.assertAgentMayAct(), (err: unknown) => {
      assert.ok(err instanceof HumanHasControlError);
      assert.equal(err.code, 'human_has_control');
      assert.match(err.message, /person has taken control/);
      assert.match(err.message, /ask them/);
      assert.equal(err.lease.holder, 'human');
      return true;
    });
    assert.throws(() => store.assertAgentStillActs(start), HumanHasControlError);
    store.release('viewer-a');
    // the agent holds again, but the epoch moved during the action: still void
    assert.throws(() => store.assertAgentStillActs(start), HumanHasControlError);
    const fresh = store.assertAgentMayAct();
    assert.equal(store.assertAgentStillActs(fresh).epoch, fresh.epoch);
  });

  test('the file is 0600 JSON in a 0700 directory, replaced (not rewritten) on each transition', { skip: process.platform === 'win32' }, () => {
    const dir = path.join(tempDir(), 'leases');
    const store = new LeaseStore(dir, 'k');
    store.acquire('viewer-a', 'r');
    assert.equal(fs.statSync(store.path).mode & 0o777, 0o600);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    const inode = fs.statSync(store.path).ino;
    store.release('viewer-a');
    assert.notEqual(fs.statSync(store.path).ino, inode, 'a new inode: written aside and renamed');
    assert.equal(fs.statSync(store.path).mode & 0o777, 0o600);
    const record = JSON.parse(fs.readFileSync(store.path, 'utf8'));
    assert.deepEqual(Object.keys(record).sort(), ['epoch', 'holder', 'reason', 'since']);
    assert.equal(record.epoch, 2);
  });

  test('publicView never carries the raw viewer id', () => {
    const store = new LeaseStore(tempDir(), 'k');
    const lease = store.acquire('secret-viewer-capability', 'r');
    const view = publicView(lease);
    assert.equal(view.viewerHash, viewerHash('secret-viewer-capability'));
    assert.match(view.viewerHash!, /^[0-9a-f]{12}$/);
    assert.equal(view.viewerHash, createHash('sha256').update('secret-viewer-capability').digest('hex').slice(0, 12));
    assert.ok(!JSON.stringify(view).includes('secret-viewer-capability'));
    assert.deepEqual(store.publicView(), view);
    const agent = publicView(store.release('secret-viewer-capability'));
    assert.equal(agent.viewerHash, undefined);
  });

  const garbage: Array<[string, string | Buffer]> = [
    ['empty', ''],
    ['not JSON', 'hello'],
    ['truncated', '{"holder":"agent","reason":"","since":"2024-01-01T00:00:00.000Z","ep'],
    ['an array', '[]'],
    ['null', 'null'],
    ['unknown holder', JSON.stringify({ holder: 'robot', reason: '', since: '2024-01-01T00:00:00Z', epoch: 3 })],
    ['no holder', JSON.stringify({ reason: '', since: '2024-01-01T00:00:00Z', epoch: 3 })],
    ['no epoch', JSON.stringify({ holder: 'agent', reason: '', since: '2024-01-01T00:00:00Z' })],
    ['negative epoch', JSON.stringify({ holder: 'agent', reason: '', since: '2024-01-01T00:00:00Z', epoch: -1 })],
    ['fractional epoch', JSON.stringify({ holder: 'agent', reason: '', since: '2024-01-01T00:00:00Z', epoch: 1.5 })],
    ['string epoch', JSON.stringify({ holder: 'agent', reason: '', since: '2024-01-01T00:00:00Z', epoch: '4' })],
    ['bad since', JSON.stringify({ holder: 'agent', reason: '', since: 'yesterday', epoch: 4 })],
    ['human without viewer', JSON.stringify({ holder: 'human', reason: '', since: '2024-01-01T00:00:00Z', epoch: 4 })],
    ['binary', Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x00])],
  ];

  for (const [name, content] of garbage) {
    test(`an unreadable lease file fails closed (human holds): ${name}`, () => {
      const dir = tempDir();
      const store = new LeaseStore(dir, 'k');
      fs.writeFileSync(store.path, content);
      const lease = store.read();
      assert.equal(lease.holder, 'human');
      assert.equal(lease.viewerId, UNREADABLE_VIEWER);
      assert.equal(typeof lease.unreadable, 'string');
      assert.throws(() => store.assertAgentMayAct(), HumanHasControlError);
      assert.equal(store.viewerMayInput(UNREADABLE_VIEWER), false, 'no viewer can match the placeholder');
      assert.throws(() => store.acquire(UNREADABLE_VIEWER, 'r'), TypeError);
      // neither a bare nor a placeholder release repairs it; a forced one does
      assert.equal(store.release().holder, 'human');
      assert.equal(store.release(UNREADABLE_VIEWER).holder, 'human');
      const repaired = store.release(undefined, { force: true });
      assert.equal(repaired.holder, 'agent');
      assert.equal(repaired.epoch, lease.epoch + 1);
      assert.equal(store.read().holder, 'agent');
    });
  }

  test('a lease path that cannot be read as a file fails closed', () => {
    const store = new LeaseStore(tempDir(), 'k');
    fs.mkdirSync(store.path);
    assert.equal(store.read().holder, 'human');
    assert.match(store.read().unreadable!, /cannot read/);
  });

  test('a UTF-8 byte order mark in front of a valid record is accepted', () => {
    const store = new LeaseStore(tempDir(), 'k');
    const record = { holder: 'human', viewerId: 'v', reason: 'r', since: '2024-01-01T00:00:00.000Z', epoch: 7 };
    fs.writeFileSync(store.path, '\uFEFF' + JSON.stringify(record));
    assert.deepEqual(store.read(), record);
    assert.equal(store.viewerMayInput('v'), true);
    assert.equal(store.release('v').epoch, 8);
  });

  test('epochs never go back after a corrupted or deleted file', () => {
    const store = new LeaseStore(tempDir(), 'k');
    store.acquire('a', 'r');
    store.release('a');
    assert.equal(store.read().epoch, 2);
    fs.writeFileSync(store.path, 'garbage');
    const closed = store.read();
    assert.equal(closed.holder, 'human');
    assert.equal(closed.epoch, 3, 'a fail-closed read is itself a change');
    assert.equal(store.acquire('b', 'repair').epoch, 4);
    fs.unlinkSync(store.path);
    assert.equal(store.read().holder, 'agent');
    assert.equal(store.acquire('c', 'r').epoch, 5);
  });

  const since = '2024-01-01T00:00:00.000Z';
  const outOfRange: Array<[string, string]> = [
    ['2^53-1', `{"holder":"agent","reason":"","since":"${since}","epoch":${2 ** 53 - 1}}`],
    ['2^53', `{"holder":"agent","reason":"","since":"${since}","epoch":9007199254740992}`],
    ['2^53+1 as written', `{"holder":"agent","reason":"","since":"${since}","epoch":9007199254740993}`],
    ['1e300', `{"holder":"agent","reason":"","since":"${since}","epoch":1e300}`],
    ['a human at 2^60', `{"holder":"human","viewerId":"v0","reason":"","since":"${since}","epoch":${2 ** 60}}`],
    ['NaN', `{"holder":"agent","reason":"","since":"${since}","epoch":NaN}`],
    ['null', `{"holder":"agent","reason":"","since":"${since}","epoch":null}`],
    ['negative', `{"holder":"agent","reason":"","since":"${since}","epoch":-5}`],
    ['a bad generation', `{"holder":"agent","reason":"","since":"${since}","epoch":3,"generation":"../x"}`],
  ];

  for (const [name, text] of outOfRange) {
    test(`an epoch out of range is corrupt, and the next take still works and orders correctly: ${name}`, () => {
      const store = new LeaseStore(tempDir(), 'k');
      fs.writeFileSync(store.path, text);
      const closed = store.read();
      assert.equal(closed.holder, 'human', 'fails closed like any corrupt file');
      assert.equal(closed.viewerId, UNREADABLE_VIEWER);
      assert.ok(Number.isSafeInteger(closed.epoch) && closed.epoch <= MAX_EPOCH + 1);

      const taken = store.acquire('viewer-x', 'take');
      assert.equal(taken.holder, 'human');
      assert.equal(taken.viewerId, 'viewer-x');
      assert.match(taken.generation ?? '', /^[0-9a-f]{16}$/, 'a new generation');
      assert.equal(store.viewerMayInput('viewer-x'), true, 'the take is in effect, not stuck fail-closed');
      const onDisk = JSON.parse(fs.readFileSync(store.path, 'utf8')) as Lease;
      assert.equal(onDisk.generation, taken.generation);
      assert.ok(Number.isSafeInteger(onDisk.epoch) && onDisk.epoch <= MAX_EPOCH);

      // Another process (a second store on the same file) agrees and continues in order.
      const other = new LeaseStore(store.dir, 'k');
      assert.deepEqual(other.read(), taken);
      const back = other.release('viewer-x');
      assert.deepEqual([back.holder, back.epoch, back.generation], ['agent', taken.epoch + 1, taken.generation]);
      const again = store.acquire('viewer-y', 'r');
      assert.deepEqual([again.epoch, again.generation], [taken.epoch + 2, taken.generation]);
    });
  }

  test('the epoch cannot get stuck at its maximum: the next transition starts a new generation', () => {
    const store = new LeaseStore(tempDir(), 'k');
    fs.writeFileSync(store.path, JSON.stringify({ holder: 'agent', reason: '', since, epoch: MAX_EPOCH }));
    const start = store.assertAgentMayAct();
    assert.equal(start.epoch, MAX_EPOCH, 'the maximum itself is a valid epoch');
    const observer = new LeaseStore(store.dir, 'k');
    assert.equal(observer.read().epoch, MAX_EPOCH);

    const taken = store.acquire('v', 'take');
    assert.deepEqual([taken.holder, taken.epoch], ['human', 1]);
    assert.match(taken.generation ?? '', /^[0-9a-f]{16}$/);
    assert.throws(() => store.assertAgentStillActs(start), HumanHasControlError);
    // The observer, which saw the maximum, follows the new generation instead of refusing it.
    assert.deepEqual(observer.read(), taken);
    const epochs: number[] = [];
    for (let i = 0; i < 10; i++) {
      epochs.push(observer.release('v').epoch, observer.acquire('v', 'r').epoch);
    }
    assert.deepEqual(epochs, Array.from({ length: 20 }, (_, i) => i + 2));
    assert.equal(observer.read().generation, taken.generation);
  });

  test('a repaired file starts a new generation: an old lease never equals a new one with the same epoch', () => {
    const store = new LeaseStore(tempDir(), 'k');
    store.acquire('v', 'r');
    store.release('v');
    const start = store.assertAgentMayAct();
    assert.deepEqual([start.holder, start.epoch, start.generation], ['agent', 2, undefined]);
    // Meanwhile the file is corrupted and another process (fresh, having seen nothing) repairs it.
    fs.writeFileSync(store.path, 'garbage');
    const fresh = new LeaseStore(store.dir, 'k');
    const repaired = fresh.release(undefined, { force: true });
    assert.deepEqual([repaired.holder, repaired.epoch], ['agent', 2], 'the same holder and the same number as before');
    assert.notEqual(repaired.generation, undefined);
    assert.throws(() => store.assertAgentStillActs(start), HumanHasControlError, 'yet the action that started before is void');
  });

  test('bad arguments are refused with clear errors and nothing is written', () => {
    const dir = tempDir();
    assert.throws(() => new LeaseStore(dir, '../evil'), /lease key/);
    assert.throws(() => new LeaseStore(dir, ''), /lease key/);
    const store = new LeaseStore(dir, 'k');
    assert.throws(() => store.acquire('', 'r'), /viewer id/);
    assert.throws(() => store.acquire('x'.repeat(300), 'r'), /viewer id/);
    assert.throws(() => store.acquire(42 as unknown as string, 'r'), /viewer id/);
    assert.throws(() => store.acquire('v', undefined as unknown as string), /reason/);
    assert.equal(fs.existsSync(store.path), false);
    assert.equal(store.acquire('v', 'r'.repeat(10_000)).reason.length, 500);
  });

  test('a lock left by a dead process is broken; a live one times out with LeaseLockError', () => {
    const store = new LeaseStore(tempDir(), 'k', { lockTimeoutMs: 300 });
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(child.stdout);
    assert.ok(deadPid > 0);
    fs.writeFileSync(store.lockPath, JSON.stringify({ pid: deadPid, host: os.hostname(), nonce: 'n', at: Date.now() }));
    assert.equal(store.acquire('v', 'r').epoch, 1);
    assert.equal(fs.existsSync(store.lockPath), false);

    // held by a live process (this one, as another store would be): bounded wait, clear error
    fs.writeFileSync(store.lockPath, JSON.stringify({ pid: process.pid, host: os.hostname(), nonce: 'n', at: Date.now() }));
    const started = Date.now();
    assert.throws(() => store.release('v'), (err: unknown) => err instanceof LeaseLockError && /could not lock/.test(err.message));
    assert.ok(Date.now() - started >= 250 && Date.now() - started < 3000);
    assert.equal(store.read().holder, 'human', 'nothing changed');
    assert.equal(fs.existsSync(store.lockPath), true, 'a live lock is left alone');

    // too old, even if the owner seems alive (or unknown)
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(store.lockPath, old, old);
    assert.equal(store.release('v').holder, 'agent');
    fs.writeFileSync(store.lockPath, '');
    fs.utimesSync(store.lockPath, old, old);
    assert.equal(store.acquire('v', 'r').epoch, 3);
    assert.deepEqual(fs.readdirSync(path.dirname(store.path)), ['lease-k.json']);
  });

  test('two processes acquiring and releasing concurrently never corrupt the file', async () => {
    const dir = tempDir();
    const key = 'shared';
    const rounds = 200;
    const file = path.join(dir, `lease-${key}.json`);
    const workers = ['viewer-one', 'viewer-two'].map((viewer) => {
      const child = spawn(process.execPath, [__filename], {
        env: { ...process.env, [WORKER_FLAG]: JSON.stringify([dir, key, viewer, rounds]) },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const lines = createInterface({ input: child.stdout! });
      const output: string[] = [];
      const ready = new Promise<void>((resolve) => lines.once('line', () => resolve()));
      lines.on('line', (line) => output.push(line));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      return { child, ready, exited, output };
    });
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) {
      w.child.stdin!.write('go\n');
    }

    // a third party keeps reading the raw file while they run
    let running = true;
    const codes = Promise.all(workers.map((w) => w.exited)).finally(() => (running = false));
    let reads = 0;
    let lastEpoch = -1;
    while (running) {
      let text: string | undefined;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'ENOENT', 'only "not yet created" is acceptable');
      }
      if (text !== undefined) {
        const record = JSON.parse(text) as Lease; // throws on a torn or corrupt file
        assert.ok(record.holder === 'agent' || record.holder === 'human');
        assert.ok(record.epoch >= lastEpoch, `epoch went back: ${lastEpoch} -> ${record.epoch}`);
        lastEpoch = record.epoch;
        reads++;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.deepEqual(await codes, [0, 0]);
    assert.ok(reads > 10, `the reader ran alongside (${reads} reads)`);

    const results = workers.map((w) => JSON.parse(w.output[1]) as { transitions: Array<{ epoch: number; previous: number }>; seen: number[] });
    const all = results.flatMap((r) => r.transitions);
    for (const t of all) {
      assert.equal(t.epoch, t.previous + 1, 'each transition bumps by exactly one');
    }
    for (const r of results) {
      for (let i = 1; i < r.seen.length; i++) {
        assert.ok(r.seen[i] >= r.seen[i - 1], 'a process never sees the epoch go back');
      }
      for (let i = 1; i < r.transitions.length; i++) {
        assert.ok(r.transitions[i].epoch > r.transitions[i - 1].epoch, 'its own transitions strictly increase');
      }
    }
    const epochs = all.map((t) => t.epoch).sort((a, b) => a - b);
    const final = new LeaseStore(dir, key).read();
    assert.equal(final.unreadable, undefined);
    assert.equal(final.epoch, all.length, 'final epoch == number of real transitions');
    assert.deepEqual(epochs, Array.from({ length: all.length }, (_, i) => i + 1), 'no epoch written twice, none skipped');
    assert.ok(all.length >= 2 * rounds, `each process made at least its own releases count (${all.length})`);
    assert.deepEqual(fs.readdirSync(dir), [`lease-${key}.json`], 'no tmp, lock or stale files left');
  });
}
