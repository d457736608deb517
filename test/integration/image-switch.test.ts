// The default-image switch against real Docker: pending question, Keep, and safe replacement.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ScreenError } from '../../src/core/problem';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import type { ScreenSettings } from '../../src/core/settings';
import { rfbHandshake } from '../support/rfb';
import { IMAGE, removeTestContainers, settings, sh, tempMarkers, testLog } from '../support/env';

// Tags of this run only: runs on one Docker engine must not remove each other's tags.
const run = process.pid.toString(36);
const OLD = `botscreen/sandbox:switch-test-old-${run}`;
const NEW = `botscreen/sandbox:switch-test-new-${run}`;

describe('image switch', () => {
  let config: ScreenSettings = settings({ docker: { image: OLD } });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const ours = () => sh('docker', ['ps', '-aq', '--no-trunc', '--filter', `label=dev.botscreen.workspace=${config.workspaceKey}`]).split('\n').filter(Boolean);
  const configImage = (id: string) => sh('docker', ['inspect', '-f', '{{.Config.Image}}', id]).trim();

  before(() => {
    sh('docker', ['tag', IMAGE, OLD]);
    sh('docker', ['tag', IMAGE, NEW]);
  });

  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    sh('docker', ['rmi', OLD, NEW]);
  });

  test('a container on another image than the unpinned default is a pending question, not a surprise', async () => {
    await controller.start();
    const [container] = ours();
    assert.equal(configImage(container), OLD);
    await controller.stop();
    config = { ...config, docker: { ...config.docker, image: NEW, imagePinned: false } };
    await controller.attach();
    assert.deepEqual(
      { current: controller.status.imageSwitch?.current, target: controller.status.imageSwitch?.target },
      { current: OLD, target: NEW },
    );
    // Starting while the question is open keeps the current container: nothing headless decides.
    await controller.start();
    assert.deepEqual(ours(), [container]);
    assert.equal(controller.status.imageSwitch?.current, OLD, 'the question is still open');
    await controller.stop();
  });

  test('Keep (the current image pinned) ends the question and keeps the container', async () => {
    const [container] = ours();
    config = { ...config, docker: { ...config.docker, image: OLD, imagePinned: true } };
    await controller.attach();
    assert.equal(controller.status.imageSwitch, undefined);
    await controller.start();
    assert.deepEqual(ours(), [container]);
    await controller.stop();
  });

  test('Switch to an image that does not exist keeps the old container and says why', async () => {
    const [container] = ours();
    config = { ...config, docker: { ...config.docker, image: 'botscreen/sandbox:does-not-exist', imagePinned: true } };
    await assert.rejects(controller.start(), (err: unknown) => {
      assert.ok(err instanceof ScreenError && err.problem.code === 'imageUnavailable');
      assert.equal(err.problem.keptContainer, container);
      return true;
    });
    assert.equal(controller.status.problem?.code, 'imageUnavailable', 'the status (and so the view) shows why');
    assert.deepEqual(ours(), [container], 'the old container is still there');
    assert.equal(sh('docker', ['inspect', '-f', '{{.State.Running}}', container]).trim(), 'true');
  });

  test('Switch to our own image while it is not built asks for the build and keeps the old container; nothing is pulled', async () => {
    const [container] = ours();
    // An own tag (bot-screen-sandbox:…) no build made: a registry could be asked for it, but is not.
    const missing = `bot-screen-sandbox:${'0'.repeat(12)}`;
    config = { ...config, docker: { ...config.docker, image: missing, imagePinned: true } };
    await assert.rejects(controller.start(), (err: unknown) => {
      assert.ok(err instanceof ScreenError && err.problem.code === 'imageMissing', String(err));
      assert.equal(err.problem.keptContainer, container);
      assert.equal(err.problem.buildable, false, 'only this version\'s tag can be built from the shipped context');
      return true;
    });
    assert.deepEqual(ours(), [container], 'the old container stays until the new image exists');
    assert.equal(sh('docker', ['inspect', '-f', '{{.State.Running}}', container]).trim(), 'true');
  });

  test('Switch to an image that exists recreates the container and the screen starts on it', async () => {
    const [old] = ours();
    config = { ...config, docker: { ...config.docker, image: NEW, imagePinned: true } };
    const status = await controller.start();
    const [replacement] = ours();
    assert.notEqual(replacement, old);
    assert.equal(configImage(replacement), NEW);
    assert.equal(status.sandbox?.id, replacement);
    const relay = controller.openRelay();
    const init = await rfbHandshake(relay.stdout, relay.stdin);
    relay.kill();
    assert.equal(init.width, 1280);
    assert.equal(controller.status.imageSwitch, undefined);
  });

  test('a named container (not ours) is never part of a switch', async () => {
    const name = `agent-own-${process.pid}`;
    sh('docker', ['run', '-d', '--init', '--name', name, OLD, 'sleep', 'infinity']);
    const named = settings({ docker: { image: NEW, container: name, imagePinned: true } });
    const other = new ScreenController(new SandboxBackends(), () => named, testLog, tempMarkers());
    try {
      await other.start();
      await other.stop();
      assert.equal(configImage(name), OLD);
      assert.equal(other.status.imageSwitch, undefined);
    } finally {
      other.dispose();
      sh('docker', ['rm', '-f', name]);
    }
  });
});
