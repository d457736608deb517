// Against a real Docker engine and the real desktop image (scripts/build-sandbox-image.sh).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ScreenError } from '../../src/core/problem';
import { SandboxBackends } from '../../src/core/backends/registry';
import { endRelay } from '../../src/core/relay';
import { ScreenController, type BackendFactory } from '../../src/core/screen';
import type { ScreenSettings } from '../../src/core/settings';
import { rfbHandshake } from '../support/rfb';
import { desktopProcesses, hostProcesses, removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';


function controllerFor(config: ScreenSettings, backends: BackendFactory = new SandboxBackends()): ScreenController {
  return new ScreenController(backends, () => config, testLog, tempMarkers());
}

/** The real backends, counting the liveness checks (each a CLI run) the controller asks for. */
function countingBackends(): BackendFactory & { livenessChecks: number } {
  const real = new SandboxBackends();
  const factory = {
    livenessChecks: 0,
    backendFor: (...args: Parameters<BackendFactory['backendFor']>) => {
      const backend = real.backendFor(...args);
      return (
        backend &&
        new Proxy(backend, {
          get(target, prop) {
            const value: unknown = Reflect.get(target, prop, target);
            if (prop === 'liveness') {
              factory.livenessChecks++;
            }
            return typeof value === 'function' ? value.bind(target) : value;
          },
        })
      );
    },
  };
  return factory;
}

describe('docker sandbox screen', () => {
  const config = settings({ geometry: '1024x640' });
  const backends = countingBackends();
  const controller = controllerFor(config, backends);
  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
  });

  test('starts inside a new labelled container and speaks RFB 3.8 through the relay', async () => {
    const status = await controller.start();
    assert.equal(status.state, 'running');
    assert.equal(status.placement?.where, 'sandbox');
    assert.equal(status.sandbox?.onHost, false);
    assert.match(status.screen!.display, /^:\d+$/);
    const relay = controller.openRelay();
    try {
      const init = await rfbHandshake(relay.stdout, relay.stdin);
      assert.equal(init.banner, 'RFB 003.008\n');
      assert.ok(init.securityTypes.includes(1), `security types ${init.securityTypes} offer None`);
      assert.deepEqual([init.width, init.height], [1024, 640]);
    } finally {
      relay.kill();
    }
  });

  test('a relay its owner ends (killed, or its stdin closed) asks nothing of the sandbox; a suspicion does', async () => {
    await controller.start();
    const before = backends.livenessChecks;
    const killed = controller.openRelay();
    await rfbHandshake(killed.stdout, killed.stdin);
    killed.kill();
    const closed = controller.openRelay();
    await rfbHandshake(closed.stdout, closed.stdin);
    endRelay(closed, [new Uint8Array([4, 0, 0, 0, 0, 0, 0xff, 0xe1])]); // a key release, as a viewer's close sends
    await Promise.all([killed.exited, closed.exited]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(backends.livenessChecks, before, 'no liveness check for relays this side ended');
    controller.suspectGone();
    await waitFor(() => backends.livenessChecks > before, 5_000, 50, 'the check a suspicion asks for (the count sees checks)');
    assert.equal(controller.status.state, 'running');
  });

  test('the container has the promised limits and no published port', () => {
    const id = controller.status.sandbox!.id;
    const inspect = JSON.parse(sh('docker', ['inspect', id]))[0];
    assert.equal(inspect.HostConfig.Init, true);
    assert.equal(inspect.HostConfig.PidsLimit, 2048);
    assert.equal(inspect.HostConfig.ShmSize, 1024 * 1024 * 1024);
    assert.deepEqual(inspect.HostConfig.CapDrop, ['ALL']);
    assert.ok(inspect.HostConfig.SecurityOpt.includes('no-new-privileges'));
    assert.ok('/tmp' in inspect.HostConfig.Tmpfs);
    assert.deepEqual(inspect.HostConfig.PortBindings ?? {}, {});
    assert.equal(inspect.Config.Labels['dev.botscreen.workspace'], config.workspaceKey);
  });

  test('the screen listens on a 0600 unix socket as pn, and never on TCP', () => {
    const { sandbox, screen } = controller.status;
    const mode = sh('docker', ['exec', sandbox!.id, 'stat', '-c', '%a %U %F', screen!.socket]).trim();
    assert.equal(mode, '600 pn socket');
    const xvnc = sh('docker', ['exec', sandbox!.id, 'pgrep', '-a', '-x', 'Xvnc']);
    assert.match(xvnc, /-rfbport -1 /);
    assert.match(xvnc, /-nolisten tcp/);
    const tcp = sh('docker', ['exec', sandbox!.id, 'cat', '/proc/net/tcp', '/proc/net/tcp6']);
    const listening = tcp.split('\n').filter((line) => / 0A /.test(line));
    assert.deepEqual(listening, [], 'no TCP listener in the sandbox');
  });

  test('a second start adopts the running screen instead of launching another', async () => {
    const pid = controller.status.screen!.pid;
    const again = await controller.start();
    assert.equal(again.screen!.pid, pid);
    assert.equal(again.screen!.adopted, true);
  });

  test('three start/stop rounds leave no desktop processes in the container and no relays here', async () => {
    for (let round = 0; round < 3; round++) {
      const started = await controller.start();
      const relay = controller.openRelay();
      await rfbHandshake(relay.stdout, relay.stdin);
      assert.ok(desktopProcesses(started.sandbox!.id).length > 0, 'the desktop runs while started');
      await controller.stop();
      await relay.exited;
      assert.deepEqual(desktopProcesses(started.sandbox!.id), [], `round ${round}: desktop processes left`);
    }
    assert.deepEqual(hostProcesses(`Bot Screen relay.*/${config.workspaceKey}/rfb\\.sock`), [], 'relay processes left on this machine');
    const containers = sh('docker', ['ps', '-q', '--filter', `label=dev.botscreen.workspace=${config.workspaceKey}`]).split('\n').filter(Boolean);
    assert.equal(containers.length, 1, 'exactly one sandbox container');
  });

  test('docker rm -f under a live screen is reported as gone within 2 s, with no host fallback', async () => {
    const started = await controller.start();
    const relay = controller.openRelay();
    await rfbHandshake(relay.stdout, relay.stdin);
    sh('docker', ['rm', '-f', started.sandbox!.id]);
    const removedAt = Date.now();
    await waitFor(() => controller.status.state === 'gone', 2_000, 50, 'the screen to be reported gone');
    testLog.warn(`gone reported ${Date.now() - removedAt} ms after docker rm -f`);
    assert.equal(controller.status.problem?.code, 'sandboxGone');
    await relay.exited;
    assert.throws(() => controller.openRelay(), (err: unknown) => err instanceof ScreenError && err.problem.code === 'sandboxGone');
    assert.deepEqual(hostProcesses(`^Xvnc .*/${config.workspaceKey}/rfb\\.sock`), [], 'no Xvnc started on this machine');
  });

  test('start after the sandbox is gone creates a new sandbox', async () => {
    const status = await controller.start();
    assert.equal(status.state, 'running');
    assert.equal(status.sandbox?.onHost, false);
    await controller.stop();
  });
});

describe('an existing container named in the settings (the agent\'s own sandbox)', () => {
  const name = `agent-sandbox-${process.pid}`;
  const config = settings({ docker: { container: name } });
  const controller = controllerFor(config);

  before(() => {
    sh('docker', ['run', '-d', '--init', '--name', name, '--label', 'test.botscreen=agent', config.docker.image, 'sleep', 'infinity']);
  });

  after(() => {
    controller.dispose();
    sh('docker', ['rm', '-f', name]);
  });

  test('gets a screen, and stop leaves the container running and unrelabelled', async () => {
    const status = await controller.start();
    assert.equal(status.sandbox?.name, name);
    const relay = controller.openRelay();
    const init = await rfbHandshake(relay.stdout, relay.stdin);
    relay.kill();
    assert.equal(init.width, 1280);
    await controller.stop();
    assert.equal(sh('docker', ['inspect', '-f', '{{.State.Running}}', name]).trim(), 'true');
    assert.equal(sh('docker', ['inspect', '-f', '{{index .Config.Labels "dev.botscreen.managed"}}', name]).trim(), '');
    assert.deepEqual(desktopProcesses(name), []);
  });

  test('a stopped named container is refused, never started or recreated', async () => {
    sh('docker', ['stop', '-t', '1', name]);
    await assert.rejects(controller.start(), (err: unknown) => err instanceof ScreenError && err.problem.code === 'containerNotRunning');
    assert.equal(sh('docker', ['inspect', '-f', '{{.State.Running}}', name]).trim(), 'false');
  });
});

describe('bad input gets a clear error and runs nothing', () => {
  async function problemOf(config: ScreenSettings): Promise<string> {
    const controller = controllerFor(config);
    try {
      await controller.start();
      return 'started';
    } catch (err) {
      return err instanceof ScreenError ? err.problem.code : String(err);
    } finally {
      controller.dispose();
      removeTestContainers(config.workspaceKey);
    }
  }

  function containersOf(key: string): string[] {
    return sh('docker', ['ps', '-aq', '--filter', `label=dev.botscreen.workspace=${key}`]).split('\n').filter(Boolean);
  }

  for (const image of ['ubuntu;touch /tmp/pwned', '-v/:/host', 'bad image', 'x$(id)', '']) {
    test(`image name ${JSON.stringify(image)}`, async () => {
      const config = settings({ docker: { image } });
      assert.equal(await problemOf(config), 'badImage');
      assert.deepEqual(containersOf(config.workspaceKey), []);
    });
  }

  for (const geometry of ['1280', '1280x', '99999x800', '100x100', '1280x800;id']) {
    test(`geometry ${JSON.stringify(geometry)}`, async () => {
      assert.equal(await problemOf(settings({ geometry })), 'badGeometry');
    });
  }

  test('an unknown backend name is refused', async () => {
    assert.equal(await problemOf(settings({ backend: undefined, backendRaw: 'dockr' })), 'refused');
  });

  test('an SDK backend is refused under auto', async () => {
    assert.equal(await problemOf(settings({ backend: 'modal', backendRaw: 'modal' })), 'refused');
  });

  test('a missing Docker CLI', async () => {
    assert.equal(await problemOf(settings({ docker: { cli: '/nonexistent/docker' } })), 'cliMissing');
  });

  test('a Docker daemon that is not running', async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
    try {
      assert.equal(await problemOf(settings()), 'daemonDown');
    } finally {
      if (saved === undefined) {
        delete process.env.DOCKER_HOST;
      } else {
        process.env.DOCKER_HOST = saved;
      }
    }
  });

  test('an image that does not exist and cannot be pulled', async () => {
    const config = settings({ docker: { image: 'botscreen/does-not-exist:never' } });
    assert.equal(await problemOf(config), 'imageUnavailable');
    assert.deepEqual(containersOf(config.workspaceKey), []);
  });

  test('an image without the desktop names the missing binaries', async () => {
    const config = settings({ docker: { image: 'local/bookworm:minbase' } });
    const controller = controllerFor(config);
    try {
      await assert.rejects(controller.start(), (err: unknown) => {
        assert.ok(err instanceof ScreenError && err.problem.code === 'missingBinaries');
        assert.ok(err.problem.names.includes('Xvnc'));
        assert.equal(err.problem.onHost, false);
        return true;
      });
    } finally {
      controller.dispose();
      removeTestContainers(config.workspaceKey);
    }
  });
});
