// Markers, adoption, stop hygiene and screens sharing a container: real Docker, real image.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { MarkerStore } from '../../src/core/marker';
import { ScreenError } from '../../src/core/problem';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import type { ScreenSettings } from '../../src/core/settings';
import { pathWithout } from '../support/path';
import { readExactly, rfbHandshake } from '../support/rfb';
import { desktopProcesses, hostProcesses, removeTestContainers, settings, sh, testLog, waitFor } from '../support/env';

function markerDir(): string {
  return mkdtempSync(join(tmpdir(), 'botscreen-markers-'));
}

describe('markers', () => {
  const dir = markerDir();
  const markers = new MarkerStore(dir);
  let config: ScreenSettings = settings();
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, markers);

  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
  });

  test('a start writes a 0600 marker naming the container, display and launcher', async () => {
    const status = await controller.start();
    const path = markers.path(config.workspaceKey);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const marker = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(marker.sandbox.id, status.sandbox!.id);
    assert.equal(marker.sandbox.backend, 'docker');
    assert.equal(marker.display, status.screen!.display);
    assert.equal(marker.pid, status.screen!.pid);
    assert.equal(marker.placement.where, 'sandbox');
  });

  test('a new controller (a reloaded window) re-attaches to the same Xvnc through the marker', async () => {
    const pid = controller.status.screen!.pid;
    const reloaded = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
    try {
      await reloaded.attach();
      assert.equal(reloaded.status.state, 'running');
      assert.equal(reloaded.status.screen!.pid, pid);
      assert.equal(reloaded.status.screen!.adopted, true);
      const relay = reloaded.openRelay();
      await rfbHandshake(relay.stdout, relay.stdin);
      relay.kill();
    } finally {
      reloaded.dispose();
    }
  });

  test('a marker with a BOM is read; adoption without a marker writes one', async () => {
    const path = markers.path(config.workspaceKey);
    writeFileSync(path, `\uFEFF${readFileSync(path, 'utf8')}`);
    assert.ok(markers.read(config.workspaceKey).marker, 'BOM-prefixed marker is read');
    markers.remove(config.workspaceKey);
    const adopter = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
    try {
      await adopter.attach();
      assert.equal(adopter.status.state, 'running');
      assert.ok(markers.read(config.workspaceKey).marker, 'adoption recorded a marker');
    } finally {
      adopter.dispose();
    }
  });

  test('the recorded owner wins: after the settings move to gateway, stop still stops the sandbox screen', async () => {
    const container = controller.status.sandbox!.id;
    config = { ...config, placement: 'gateway' };
    const other = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
    try {
      await other.attach();
      assert.equal(other.status.placement?.where, 'sandbox', 'status follows the marker, not the setting');
      await other.stop();
      assert.deepEqual(desktopProcesses(container), []);
      assert.equal(markers.read(config.workspaceKey).marker, undefined, 'stop removed the marker');
      assert.deepEqual(hostProcesses(`^Xvnc .*/${config.workspaceKey}/rfb\\.sock`), [], 'nothing started on this machine');
    } finally {
      other.dispose();
      config = { ...config, placement: 'auto' };
    }
  });

  test('a Docker CLI that cannot answer keeps the marker and says the state is unknown', async () => {
    await controller.start();
    const key = config.workspaceKey;
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
    const blind = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
    try {
      await blind.attach();
      assert.equal(blind.status.state, 'error');
      assert.equal(blind.status.problem?.code, 'sandboxUnknown');
      assert.ok(markers.read(key).marker, 'the marker stays: an unanswered CLI is not proof the sandbox is gone');
    } finally {
      process.env.DOCKER_HOST = saved;
      if (saved === undefined) {
        delete process.env.DOCKER_HOST;
      }
      blind.dispose();
    }
    await controller.stop();
  });

  test('a marker naming a container that never existed: clear "gone" status, marker dropped, no crash', async () => {
    const key = config.workspaceKey;
    writeFileSync(markers.path(key), JSON.stringify({
      version: 1, workspaceKey: key, placement: { where: 'sandbox', backend: 'docker' },
      sandbox: { backend: 'docker', id: 'f'.repeat(64), name: 'never-existed' },
      display: ':20', runtimeDir: '/tmp/x', socket: '/tmp/x/rfb.sock', pid: 42, geometry: '1280x800', startedAt: '',
    }));
    const fresh = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
    try {
      await fresh.attach();
      assert.equal(fresh.status.state, 'gone');
      assert.equal(fresh.status.problem?.code, 'sandboxGone');
      assert.equal(markers.read(key).marker, undefined);
    } finally {
      fresh.dispose();
    }
  });

  for (const [what, damage] of [
    ['corrupted', (path: string) => writeFileSync(path, '{"version":1, "sandbox": [tru')],
    ['not a marker', (path: string) => writeFileSync(path, '[1,2,3]')],
    // Root reads any mode, so "unreadable" is a directory where the file should be (EISDIR).
    ['unreadable', (path: string) => mkdirSync(path)],
  ] as const) {
    test(`a ${what} marker file counts as no marker: clear status, no crash`, async () => {
      const key = config.workspaceKey;
      damage(markers.path(key));
      const read = markers.read(key);
      assert.equal(read.marker, undefined);
      const fresh = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
      try {
        await fresh.attach();
        assert.equal(fresh.status.state, 'stopped');
      } finally {
        fresh.dispose();
        rmSync(markers.path(key), { recursive: true, force: true });
      }
    });
  }
});

describe('stop hygiene', () => {
  const config = settings();
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, new MarkerStore(markerDir()));

  after(() => {
    controller.dispose();
    removeTestContainers(config.workspaceKey);
  });

  test('20 start/stop rounds leave no desktop process, no relay here, no extra container', async () => {
    for (let round = 0; round < 20; round++) {
      const status = await controller.start();
      const relay = controller.openRelay();
      await rfbHandshake(relay.stdout, relay.stdin);
      await controller.stop();
      await relay.exited;
      assert.deepEqual(desktopProcesses(status.sandbox!.id), [], `round ${round}`);
    }
    const containers = sh('docker', ['ps', '-aq', '--filter', `label=dev.botscreen.workspace=${config.workspaceKey}`]).split('\n').filter(Boolean);
    assert.equal(containers.length, 1, 'exactly one sandbox container');
    const zombies = sh('docker', ['exec', containers[0], 'ps', '-eo', 'stat=']).split('\n').filter((s) => s.startsWith('Z'));
    assert.deepEqual(zombies, [], 'no zombies in the container');
    assert.deepEqual(hostProcesses(`Bot Screen relay.*/${config.workspaceKey}/rfb\\.sock`), []);
  });
});

describe('two workspaces sharing one container (the agent\'s own)', () => {
  const name = `agent-shared-${process.pid}`;
  const first = settings({ docker: { container: name } });
  const second = settings({ docker: { container: name } });
  const a = new ScreenController(new SandboxBackends(), () => first, testLog, new MarkerStore(markerDir()));
  const b = new ScreenController(new SandboxBackends(), () => second, testLog, new MarkerStore(markerDir()));

  after(async () => {
    await a.stop().catch(() => undefined);
    await b.stop().catch(() => undefined);
    a.dispose();
    b.dispose();
    sh('docker', ['rm', '-f', name]);
  });

  test('each gets its own display and runtime dir, and both render', async () => {
    sh('docker', ['run', '-d', '--init', '--name', name, first.docker.image, 'sleep', 'infinity']);
    const one = await a.start();
    const two = await b.start();
    assert.notEqual(one.screen!.display, two.screen!.display);
    assert.notEqual(one.screen!.runtimeDir, two.screen!.runtimeDir);
    for (const controller of [a, b]) {
      const relay = controller.openRelay();
      const init = await rfbHandshake(relay.stdout, relay.stdin);
      assert.deepEqual([init.width, init.height], [1280, 800]);
      // FramebufferUpdateRequest (full), then the first FramebufferUpdate header: type 0.
      const request = Buffer.from([3, 0, 0, 0, 0, 0, 5, 0, 3, 32]);
      relay.stdin.write(request);
      const [type] = await readExactly(relay.stdout, 1);
      assert.equal(type, 0, 'a framebuffer update arrives');
      relay.kill();
    }
    await a.stop();
    assert.equal((await b.start()).screen!.adopted, true, 'stopping one leaves the other running');
  });
});

describe('idle auto-stop', () => {
  test('a screen nobody uses stops after botScreen.idleStopMinutes; 0 never stops it', async () => {
    const idle = settings({ idleStopMinutes: 0.03 });
    const never = settings({ idleStopMinutes: 0 });
    const a = new ScreenController(new SandboxBackends(), () => idle, testLog, new MarkerStore(markerDir()), { idleCheckMs: 200 });
    const b = new ScreenController(new SandboxBackends(), () => never, testLog, new MarkerStore(markerDir()), { idleCheckMs: 200 });
    try {
      const started = Date.now();
      await Promise.all([a.start(), b.start()]);
      await waitFor(() => a.status.state === 'stopped', 10_000, 50, 'the idle screen to stop');
      testLog.warn(`idle screen (limit 1.8 s) stopped after ${Date.now() - started} ms`);
      assert.deepEqual(desktopProcesses(a.status.sandbox?.id ?? `botscreen-${idle.workspaceKey}`), []);
      assert.equal(b.status.state, 'running', 'idleStopMinutes 0 disables the auto-stop');
      await b.stop();
    } finally {
      a.dispose();
      b.dispose();
      removeTestContainers(idle.workspaceKey);
      removeTestContainers(never.workspaceKey);
    }
  });

  test('a person holding control keeps an idle screen running', async () => {
    const config = settings({ idleStopMinutes: 0.01 });
    const controller = new ScreenController(new SandboxBackends(), () => config, testLog, new MarkerStore(markerDir()), { idleCheckMs: 100, humanHasControl: () => true });
    try {
      await controller.start();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      assert.equal(controller.status.state, 'running');
      await controller.stop();
    } finally {
      controller.dispose();
      removeTestContainers(config.workspaceKey);
    }
  });
});

describe('a screen on this machine without the desktop installed', () => {
  test('is blocked with the missing programs named, and nothing starts', async () => {
    const saved = process.env.PATH;
    process.env.PATH = pathWithout(['Xvnc', 'xfwm4']);
    const config = settings({ placement: 'gateway' });
    const controller = new ScreenController(new SandboxBackends(), () => config, testLog, new MarkerStore(markerDir()));
    try {
      await assert.rejects(controller.start(), (err: unknown) => {
        assert.ok(err instanceof ScreenError && err.problem.code === 'missingBinaries');
        assert.equal(err.problem.onHost, true, 'the blocker is about this machine (the Install action applies)');
        assert.deepEqual([...err.problem.names].sort(), ['Xvnc', 'xfwm4']);
        return true;
      });
      assert.equal(controller.status.state, 'blocked');
      assert.deepEqual(hostProcesses(`/${config.workspaceKey}/launcher\\.sh`), []);
    } finally {
      process.env.PATH = saved;
      controller.dispose();
    }
  });
});
