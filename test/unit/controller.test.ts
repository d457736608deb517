// The screen controller's state machine, against a FAKE backend (test/support/fakeBackend.ts):
// every transition (stopped -> starting -> running -> stopping/gone/error/stopped), adoption of
// a marker's live screen, the recorded owner winning over the settings, unknown not being gone,
// and operations running one at a time. No engine: the whole file runs in well under 5 s. The
// same behaviour against real Docker, Podman and sshd is in test/integration/*-screen.test.ts
// and lifecycle.test.ts.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { Logger } from '../../src/core/logger';
import type { MarkerStore } from '../../src/core/marker';
import { ScreenError, type Problem } from '../../src/core/problem';
import { ScreenController, type ControllerOptions, type ScreenStatus } from '../../src/core/screen';
import { isLegalMove, type ScreenState } from '../../src/core/screenState';
import type { ScreenSettings } from '../../src/core/settings';
import { settings, tempMarkers, waitFor } from '../support/env';
import { FakeBackend, fakeBackends, fakeRun } from '../support/fakeBackend';

const STARTED = Date.now();

/** A log that keeps what was said; an illegal state change is logged as an error. */
function recordingLog(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    debug: (m) => lines.push(`debug ${m}`),
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
}

interface Rig {
  readonly controller: ScreenController;
  /** Every state the controller moved to, in order (status updates within a state included). */
  readonly states: ScreenState[];
  readonly log: ReturnType<typeof recordingLog>;
  readonly markers: MarkerStore;
  config: ScreenSettings;
}

const rigs: Rig[] = [];

afterEach(() => {
  for (const rig of rigs.splice(0)) {
    rig.controller.dispose();
    assert.deepEqual(rig.log.lines.filter((line) => line.includes('illegal')), [], 'no illegal state change was attempted');
  }
});

function rig(fakes: FakeBackend[], options: { config?: ScreenSettings; markers?: MarkerStore; controller?: ControllerOptions } = {}): Rig {
  const log = recordingLog();
  const states: ScreenState[] = [];
  const r: Rig = {
    log,
    states,
    markers: options.markers ?? tempMarkers(),
    config: options.config ?? settings(),
    controller: undefined as unknown as ScreenController,
  };
  const controller = new ScreenController(fakeBackends(...fakes), () => r.config, log, r.markers, { run: fakeRun, ...options.controller });
  controller.onStatus((status) => states.push(status.state));
  (r as { controller: ScreenController }).controller = controller;
  rigs.push(r);
  return r;
}

async function rejectsWith(promise: Promise<unknown>, code: Problem['code']): Promise<Problem> {
  let problem: Problem | undefined;
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ScreenError, `a ScreenError, not ${String(err)}`);
    problem = err.problem;
    return true;
  });
  assert.equal(problem?.code, code);
  return problem!;
}

function marker(r: Rig) {
  return r.markers.read(r.config.workspaceKey).marker;
}

describe('the screen controller with a fake backend', () => {
  test('a new controller is stopped; a backend that cannot host a screen is refused before anything runs', () => {
    const fake = new FakeBackend('docker');
    assert.equal(rig([fake]).controller.status.state, 'stopped');
    const refused = rig([fake], { config: settings({ backend: 'modal', backendRaw: 'modal' }) });
    assert.equal(refused.controller.status.state, 'refused');
    assert.deepEqual(refused.controller.status.problem, { code: 'refused', backend: 'modal' });
    assert.deepEqual(fake.calls, []);
  });

  test('start: stopped -> starting -> running, the marker written, the sandbox reachable', async () => {
    const fake = new FakeBackend('docker');
    const r = rig([fake]);
    const status = await r.controller.start();
    assert.deepEqual(r.states, ['starting', 'running']);
    assert.equal(status.state, 'running');
    assert.deepEqual(status.sandbox, { backend: 'docker', id: fake.id, name: 'fake-docker', onHost: false });
    assert.equal(status.screen?.display, ':7');
    assert.equal(status.screen?.adopted, false);
    assert.deepEqual(fake.calls, ['prepare (consent)', 'launcher start']);
    assert.equal(marker(r)?.sandbox.id, fake.id);
    assert.equal(r.controller.runningSandbox()?.sandbox.id, fake.id);
  });

  test('stop: running -> stopping -> stopped, the launcher told to stop and the marker removed', async () => {
    const fake = new FakeBackend('docker');
    const r = rig([fake]);
    await r.controller.start();
    fake.calls.length = 0;
    const status = await r.controller.stop();
    assert.deepEqual(r.states, ['starting', 'running', 'stopping', 'stopped']);
    assert.equal(status.state, 'stopped');
    assert.deepEqual(fake.calls, [`fromIdentity ${fake.id}`, 'liveness', 'launcher stop']);
    assert.equal(marker(r), undefined);
    assert.equal(r.controller.runningSandbox(), undefined);
  });

  test('a stop that fails while the sandbox lives: stopping -> error, the marker kept', async () => {
    const fake = new FakeBackend('docker');
    const r = rig([fake]);
    await r.controller.start();
    fake.stopExit = 1;
    const problem = await rejectsWith(r.controller.stop(), 'commandFailed');
    assert.deepEqual(problem, { code: 'commandFailed', what: 'stop', detail: 'fake stop failed' });
    assert.deepEqual(r.states.slice(-2), ['stopping', 'error']);
    assert.ok(marker(r), 'the screen may still run: its marker stays');
  });

  test('the sandbox found gone while running: running -> gone, the marker dropped', async () => {
    const fake = new FakeBackend('docker');
    const r = rig([fake]);
    await r.controller.start();
    fake.alive = 'gone';
    await r.controller.checkLiveness();
    assert.equal(r.controller.status.state, 'gone');
    assert.deepEqual(r.controller.status.problem, { code: 'sandboxGone' });
    assert.equal(marker(r), undefined);
    assert.throws(() => r.controller.openRelay(), (err: unknown) => err instanceof ScreenError && err.problem.code === 'sandboxGone');
  });

  test('a start whose launcher failed and whose liveness probe then throws ends in error, not stuck in starting; Stop still runs', async () => {
    const fake = new FakeBackend('docker');
    const r = rig([fake]);
    fake.nextStart = { kind: 'exit', code: 1, stderr: 'launcher broke' };
    fake.liveness = async () => {
      throw new ScreenError({ code: 'cliMissing', cli: 'docker', setting: 'botScreen.sandbox.docker.path' });
    };
    await rejectsWith(r.controller.start(), 'cliMissing');
    assert.deepEqual(r.states, ['starting', 'error']);
    await r.controller.stop();
    assert.equal(r.controller.status.state, 'stopped');
  });

  test('unknown is not gone: a liveness check that cannot tell leaves the screen running and its marker', async () => {
    const fake = new FakeBackend('docker');
    const r = rig([fake]);
    await r.controller.start();
    fake.alive = 'unknown';
    await r.controller.checkLiveness();
    assert.equal(r.controller.status.state, 'running');
    assert.ok(marker(r));
  });

  test("the liveness timer notices a vanished sandbox by itself, at the backend's interval", async () => {
    const fake = new FakeBackend('docker');
    fake.livenessIntervalMs = 10;
    const r = rig([fake]);
    await r.controller.start();
    fake.alive = 'gone';
    await waitFor(() => r.controller.status.state === 'gone', 2_000, 5, 'the gone state');
    assert.deepEqual(r.states, ['starting', 'running', 'gone']);
  });

  test('an exec that failed (suspectGone) asks at once, long before the next poll', async () => {
    const fake = new FakeBackend('docker'); // polls every 60 s
    const r = rig([fake]);
    await r.controller.start();
    fake.calls.length = 0;
    fake.alive = 'gone';
    r.controller.suspectGone();
    await waitFor(() => r.controller.status.state === 'gone', 2_000, 5, 'the gone state');
    assert.deepEqual(fake.calls, ['liveness']);
  });

  test('adoption: a new controller (a reloaded window) attaches to the screen its marker records, creating nothing', async () => {
    const fake = new FakeBackend('docker');
    const first = rig([fake]);
    await first.controller.start();
    first.controller.dispose();
    fake.calls.length = 0;
    const reloaded = rig([fake], { config: first.config, markers: first.markers });
    await reloaded.controller.attach();
    assert.deepEqual(reloaded.states, ['running']);
    assert.deepEqual(fake.calls, [`fromIdentity ${fake.id}`, 'liveness', 'launcher status']);
    assert.equal(reloaded.controller.status.screen?.adopted, true);
  });

  test('adoption: a start finds the recorded screen and adopts it instead of preparing a sandbox', async () => {
    const fake = new FakeBackend('docker');
    const first = rig([fake]);
    await first.controller.start();
    fake.calls.length = 0;
    const second = rig([fake], { config: first.config, markers: first.markers });
    const status = await second.controller.start();
    assert.equal(status.screen?.adopted, true);
    assert.deepEqual(fake.calls, [`fromIdentity ${fake.id}`, 'liveness', 'launcher start']);
  });

  test('attach with no marker finds the screen the settings point at, or settles stopped', async () => {
    const fake = new FakeBackend('docker');
    fake.screenRunning = true;
    const r = rig([fake]);
    await r.controller.attach();
    assert.deepEqual(r.states, ['running']);
    assert.ok(marker(r), 'the adopted screen is recorded');
    const idle = new FakeBackend('docker');
    const s = rig([idle]);
    await s.controller.attach();
    assert.deepEqual(s.states, ['stopped']);
    assert.deepEqual(idle.calls, ['find', 'launcher status']);
  });

  test('the recorded owner wins: after the settings moved to podman, stop and start act on the docker sandbox the marker records', async () => {
    const docker = new FakeBackend('docker');
    const podman = new FakeBackend('podman');
    const r = rig([docker, podman]);
    await r.controller.start();
    r.config = { ...r.config, backend: 'podman', backendRaw: 'podman' };
    const adopted = await r.controller.start();
    assert.deepEqual(adopted.placement, { where: 'sandbox', backend: 'docker' });
    assert.equal(adopted.screen?.adopted, true);
    await r.controller.stop();
    assert.ok(docker.calls.includes('launcher stop'));
    assert.deepEqual(podman.calls, [], 'the sandbox the settings name now was never touched');
    assert.deepEqual(r.controller.status.placement, { where: 'sandbox', backend: 'docker' });
  });

  test("a recorded sandbox that is gone: the marker dropped, state gone, and attach creates nothing", async () => {
    const fake = new FakeBackend('docker');
    const first = rig([fake]);
    await first.controller.start();
    first.controller.dispose();
    fake.alive = 'gone';
    fake.calls.length = 0;
    const reloaded = rig([fake], { config: first.config, markers: first.markers });
    await reloaded.controller.attach();
    assert.deepEqual(reloaded.states, ['gone']);
    assert.deepEqual(reloaded.controller.status.problem, { code: 'sandboxGone' });
    assert.equal(marker(reloaded), undefined);
    assert.deepEqual(fake.calls, [`fromIdentity ${fake.id}`, 'liveness']);
  });

  test('a recorded sandbox that cannot be checked is unknown, not gone: error sandboxUnknown, the marker kept', async () => {
    const fake = new FakeBackend('docker');
    const first = rig([fake]);
    await first.controller.start();
    first.controller.dispose();
    fake.alive = 'unknown';
    const reloaded = rig([fake], { config: first.config, markers: first.markers });
    await reloaded.controller.attach();
    assert.deepEqual(reloaded.states, ['error']);
    assert.deepEqual(reloaded.controller.status.problem, { code: 'sandboxUnknown', name: 'fake-docker' });
    assert.ok(marker(reloaded), 'the marker stays for when the CLI answers again');
  });

  test('a marker naming a backend the factory cannot make is ignored (logged), and the settings decide', async () => {
    const docker = new FakeBackend('docker');
    const first = rig([docker]);
    await first.controller.start();
    first.controller.dispose();
    const podman = new FakeBackend('podman');
    const other = rig([podman], { config: { ...first.config, backend: 'podman', backendRaw: 'podman' }, markers: first.markers });
    await other.controller.attach();
    assert.deepEqual(other.states, ['stopped']);
    assert.ok(other.log.lines.some((line) => line.includes('which this version cannot reach')));
    assert.deepEqual(podman.calls, ['find', 'launcher status']);
  });

  describe('a start that fails: starting -> the state its problem calls for', () => {
    const cases: Array<[string, (fake: FakeBackend) => void, ScreenState, Partial<Problem>]> = [
      ['missing desktop binaries', (f) => (f.nextStart = { kind: 'exit', code: 3, stdout: 'BOTSCREEN_MISSING=Xvnc xfwm4\n' }), 'blocked',
        { code: 'missingBinaries', onHost: false, names: ['Xvnc', 'xfwm4'], setting: 'botScreen.sandbox.docker.image' }],
      ['a screen that did not come up', (f) => (f.nextStart = { kind: 'exit', code: 4, stderr: 'Xvnc log tail' }), 'error', { code: 'startTimeout', log: 'Xvnc log tail' }],
      ['a launcher that failed', (f) => (f.nextStart = { kind: 'exit', code: 1, stderr: 'boom' }), 'error', { code: 'commandFailed', what: 'launcher', detail: 'boom' }],
      ['a sandbox that vanished during the start', (f) => {
        f.nextStart = { kind: 'exit', code: 137 };
        f.alive = 'gone';
      }, 'gone', { code: 'sandboxGone' }],
      ['a prepare that failed', (f) => (f.prepareError = new ScreenError({ code: 'cliMissing', cli: 'docker', setting: 'botScreen.sandbox.docker.path' })), 'blocked',
        { code: 'cliMissing', cli: 'docker', setting: 'botScreen.sandbox.docker.path' }],
      ['a prepare that threw something else', (f) => (f.prepareError = new Error('socket hang up')), 'blocked', { code: 'commandFailed', what: 'start', detail: 'socket hang up' }],
    ];
    for (const [what, arrange, state, expected] of cases) {
      test(what, async () => {
        const fake = new FakeBackend('docker');
        arrange(fake);
        const r = rig([fake]);
        const problem = await rejectsWith(r.controller.start(), expected.code!);
        assert.deepEqual(problem, expected);
        assert.deepEqual(r.states, ['starting', state]);
        assert.deepEqual(r.controller.status.problem, expected);
        assert.equal(marker(r), undefined);
        assert.equal(r.controller.runningSandbox(), undefined);
      });
    }
  });

  test('a start that needs the user: starting -> stopped, the question handed to the caller', async () => {
    const fake = new FakeBackend('docker');
    const question = { kind: 'replaceContainer', backend: 'docker', container: 'c', currentImage: 'a:1', image: 'b:2' } as const;
    fake.prepareError = new ScreenError({ code: 'needsConsent', question, declined: false });
    const r = rig([fake]);
    await rejectsWith(r.controller.start(), 'needsConsent');
    assert.deepEqual(r.states, ['starting', 'stopped']);
    assert.equal(r.controller.status.problem, undefined);
  });

  test('refusals before anything starts: untrusted -> blocked, a refused backend, a bad geometry -> error', async () => {
    const fake = new FakeBackend('docker');
    const untrusted = rig([fake], { controller: { trusted: () => false } });
    await rejectsWith(untrusted.controller.start(), 'untrusted');
    await untrusted.controller.attach();
    assert.deepEqual(untrusted.states, ['blocked', 'blocked']);
    assert.equal((await untrusted.controller.stop()).state, 'blocked', 'a stop in Restricted Mode runs nothing');
    const refused = rig([fake], { config: settings({ backend: 'vercel', backendRaw: 'vercel' }) });
    await rejectsWith(refused.controller.start(), 'refused');
    assert.deepEqual(refused.states, ['refused']);
    const badGeometry = rig([fake], { config: settings({ geometry: '12x12' }) });
    await rejectsWith(badGeometry.controller.start(), 'badGeometry');
    assert.deepEqual(badGeometry.states, ['error']);
    assert.deepEqual(fake.calls, [], 'none of them reached the backend');
  });

  test('operations run one at a time: a stop issued during a start runs after it', async () => {
    const fake = new FakeBackend('docker');
    let release!: () => void;
    fake.prepareGate = new Promise((resolve) => (release = resolve));
    const r = rig([fake]);
    const starting = r.controller.start();
    const stopping = r.controller.stop();
    await waitFor(() => fake.calls.length > 0, 1_000, 5, 'the start to reach prepare');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(r.states, ['starting'], 'the stop waits for the start');
    release();
    await starting;
    await stopping;
    assert.deepEqual(r.states, ['starting', 'running', 'stopping', 'stopped']);
    assert.equal(marker(r), undefined);
  });

  test('operations run one at a time: two starts at once prepare one sandbox, the second adopts the screen', async () => {
    const fake = new FakeBackend('docker');
    const r = rig([fake]);
    const [a, b] = await Promise.all([r.controller.start(), r.controller.start()]);
    assert.equal(a.screen?.adopted, false);
    assert.equal(b.screen?.adopted, true);
    assert.equal(fake.calls.filter((call) => call.startsWith('prepare')).length, 1);
    assert.deepEqual(r.states, ['starting', 'running', 'starting', 'running']);
  });

  test('stop with nothing to stop: stopped, and a gone screen stays gone', async () => {
    const fake = new FakeBackend('docker');
    fake.findsSandbox = false;
    const r = rig([fake]);
    assert.equal((await r.controller.stop()).state, 'stopped');
    const gone = new FakeBackend('docker');
    const g = rig([gone]);
    await g.controller.start();
    gone.alive = 'gone';
    await g.controller.checkLiveness();
    gone.findsSandbox = false;
    assert.equal((await g.controller.stop()).state, 'gone');
    assert.ok(!gone.calls.includes('launcher stop'));
  });

  test("image switch: the backend's pending switch is offered after an operation, and withdrawn when it is gone", async () => {
    const fake = new FakeBackend('docker');
    const offered = { current: 'old:1', target: 'new:2', containerId: fake.id };
    fake.imageSwitch = offered;
    const r = rig([fake]);
    const seen: Array<ScreenStatus['imageSwitch']> = [];
    r.controller.onStatus((status) => seen.push(status.imageSwitch));
    await r.controller.start();
    await waitFor(() => r.controller.status.imageSwitch !== undefined, 1_000, 5, 'the image question');
    assert.deepEqual(r.controller.status.imageSwitch, offered);
    assert.equal(r.controller.status.state, 'running', 'the question changes nothing else');
    fake.imageSwitch = undefined;
    await r.controller.stop();
    await waitFor(() => r.controller.status.imageSwitch === undefined, 1_000, 5, 'the question withdrawn');
    assert.deepEqual(r.states, ['starting', 'running', 'running', 'stopping', 'stopped']);
  });

  test('idle: running -> stopping -> stopped once nobody used the screen, unless a person holds control', async () => {
    const fake = new FakeBackend('docker');
    const idle = rig([fake], { config: settings({ idleStopMinutes: 0.0005 }), controller: { idleCheckMs: 10 } });
    await idle.controller.start();
    await waitFor(() => idle.controller.status.state === 'stopped', 2_000, 5, 'the idle stop');
    assert.deepEqual(idle.states, ['starting', 'running', 'stopping', 'stopped']);
    const held = new FakeBackend('docker');
    const kept = rig([held], { config: settings({ idleStopMinutes: 0.0005 }), controller: { idleCheckMs: 10, humanHasControl: () => true } });
    await kept.controller.start();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(kept.controller.status.state, 'running');
  });

  test('dispose ends the live backend connections (an ssh control master)', async () => {
    const fake = new FakeBackend('ssh');
    const r = rig([fake], { config: settings({ backend: 'ssh', backendRaw: 'ssh' }) });
    await r.controller.start();
    r.controller.dispose();
    assert.ok(fake.calls.includes('disconnect'));
  });

  test('the state table: an operation in flight ends only the way it can; a settled state may go anywhere', () => {
    assert.ok(!isLegalMove('stopping', 'running'));
    assert.ok(!isLegalMove('stopping', 'starting'));
    assert.ok(!isLegalMove('starting', 'stopping'));
    for (const to of ['running', 'stopped', 'gone', 'error', 'blocked', 'refused'] as const) {
      assert.ok(isLegalMove('starting', to), `starting -> ${to}`);
    }
    for (const from of ['stopped', 'running', 'gone', 'refused', 'blocked', 'error'] as const) {
      assert.ok(isLegalMove(from, 'starting') && isLegalMove(from, 'stopping'), from);
    }
  });

  test('the whole file runs in milliseconds', () => {
    assert.ok(Date.now() - STARTED < 5_000, `${Date.now() - STARTED} ms`);
  });
});
