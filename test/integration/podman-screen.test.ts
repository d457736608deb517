// The screen in a Podman container, for real: Debian's rootful podman 4.3 with the desktop image
// loaded into podman's own storage (`docker save | podman load`).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ScreenError } from '../../src/core/problem';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { rfbHandshake } from '../support/rfb';
import { IMAGE, settings, sh, tempMarkers, testLog } from '../support/env';

function podman(args: string[]): string {
  return sh('podman', args);
}

function hardLimit(name: string): number {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(name)) ?? '';
  const value = Number(line.slice(name.length).trim().split(/\s+/)[1]);
  return Number.isFinite(value) ? value : 4096;
}

// Podman is installed by scripts/setup-sshd-deps.sh (part of the test setup): without it these
// tests fail, they are never skipped.
describe('podman sandbox screen', () => {
  const config = settings({ backend: 'podman', backendRaw: 'podman', geometry: '1024x640' });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  let confDir: string | undefined;
  const ours = () => podman(['ps', '-aq', '--filter', `label=dev.botscreen.workspace=${config.workspaceKey}`]).split('\n').filter(Boolean);

  before(() => {
    execFileSync('podman', ['--version'], { stdio: 'ignore' });
    // Rootful podman applies its own default rlimits (nofile 1048576...), which a process
    // without CAP_SYS_RESOURCE (this machine runs inside a container) may not raise to:
    // cap them at what this process has, through a private containers.conf.
    const dir = (confDir = mkdtempSync(join(tmpdir(), 'botscreen-podman-')));
    const nofile = hardLimit('Max open files');
    const nproc = Math.min(hardLimit('Max processes'), 32768);
    writeFileSync(join(dir, 'containers.conf'), `[containers]\ndefault_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]\n`);
    process.env.CONTAINERS_CONF = join(dir, 'containers.conf');
    try {
      execFileSync('podman', ['image', 'exists', IMAGE], { stdio: 'ignore' });
    } catch {
      const started = Date.now();
      execFileSync('bash', ['-c', 'set -o pipefail; docker save "$1" | podman load -q', 'load', IMAGE], { stdio: 'ignore', timeout: 300_000 });
      testLog.warn(`loaded ${IMAGE} into podman storage in ${Date.now() - started} ms`);
    }
  });

  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    const ids = ours();
    if (ids.length > 0) {
      podman(['rm', '-f', ...ids]);
    }
    if (confDir) {
      rmSync(confDir, { recursive: true, force: true });
    }
  });

  test('starts inside a new labelled podman container and speaks RFB 3.8 through the relay', async () => {
    const startedAt = Date.now();
    const status = await controller.start();
    testLog.warn(`podman screen start (container created): ${Date.now() - startedAt} ms`);
    assert.equal(status.state, 'running', JSON.stringify(status.problem));
    assert.equal(status.sandbox?.backend, 'podman');
    assert.equal(status.sandbox?.onHost, false);
    const relay = controller.openRelay();
    try {
      const init = await rfbHandshake(relay.stdout, relay.stdin);
      assert.equal(init.banner, 'RFB 003.008\n');
      assert.ok(init.securityTypes.includes(1));
      assert.deepEqual([init.width, init.height], [1024, 640]);
    } finally {
      relay.kill();
    }
    const inspect = JSON.parse(podman(['inspect', status.sandbox!.id]))[0];
    assert.equal(inspect.HostConfig.PidsLimit, 2048);
    assert.deepEqual(inspect.HostConfig.PortBindings ?? {}, {});
    assert.equal(inspect.Config.Labels['dev.botscreen.managed'], '1');
    assert.equal(inspect.Config.Labels['dev.botscreen.requested-image'], IMAGE);
    assert.equal(controller.status.imageSwitch, undefined, 'podman\'s localhost/ prefix is not an image change');
  });

  test('a second start reuses the same container and adopts the screen', async () => {
    const { screen, sandbox } = controller.status;
    const again = await controller.start();
    assert.equal(again.sandbox!.id, sandbox!.id);
    assert.equal(again.screen!.pid, screen!.pid);
    assert.equal(again.screen!.adopted, true);
    assert.equal(ours().length, 1);
  });

  test('stop leaves no desktop process in the container', async () => {
    const id = controller.status.sandbox!.id;
    await controller.stop();
    const left = podman(['exec', id, 'pgrep', '-a', '-f', 'Xvnc|xfwm4|xfce4-panel|xfdesktop|launcher.sh']).split('\n').filter(Boolean);
    assert.deepEqual(left, []);
  });

  test('a missing podman binary is a clear error and runs nothing', async () => {
    const missing = settings({ backend: 'podman', backendRaw: 'podman', podman: { cli: '/nonexistent/podman' } });
    const other = new ScreenController(new SandboxBackends(), () => missing, testLog, tempMarkers());
    try {
      await assert.rejects(other.start(), (err: unknown) => err instanceof ScreenError && err.problem.code === 'cliMissing' && err.problem.cli === '/nonexistent/podman');
    } finally {
      other.dispose();
    }
  });
});
