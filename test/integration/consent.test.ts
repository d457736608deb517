// A workspace image against real Docker: a start never removes our container for it without a
// person's yes. An agent (no one to ask) is refused and the container stays; "keep" starts on the
// current container; "cancel" changes nothing; "yes" replaces it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { StartQuestion } from '../../src/core/consent';
import { ScreenError } from '../../src/core/problem';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import type { ScreenSettings } from '../../src/core/settings';
import { IMAGE, removeTestContainers, settings, sh, tempMarkers, testLog } from '../support/env';

const tag = randomBytes(4).toString('hex');
const OLD = `botscreen/sandbox:consent-old-${tag}`;
const NEW = `botscreen/sandbox:consent-new-${tag}`;

describe('a workspace image', () => {
  let config: ScreenSettings = settings({ docker: { image: OLD } });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const ours = () => sh('docker', ['ps', '-aq', '--no-trunc', '--filter', `label=dev.botscreen.workspace=${config.workspaceKey}`]).split('\n').filter(Boolean);
  const configImage = (id: string) => sh('docker', ['inspect', '-f', '{{.Config.Image}}', id]).trim();
  const asked: StartQuestion[] = [];
  const answer = (a: 'yes' | 'keep' | 'cancel') => async (q: StartQuestion) => {
    asked.push(q);
    return a;
  };

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

  test('an agent\'s start is refused with the question, and the container and its image stay', async () => {
    await controller.start();
    const [container] = ours();
    assert.equal(configImage(container), OLD);
    await controller.stop();
    config = { ...config, docker: { ...config.docker, image: NEW, imagePinned: false, imageFromWorkspace: true } };
    await controller.attach();
    assert.equal(controller.status.imageSwitch, undefined, 'no Switch offer: it would copy the workspace image into the user settings');
    await assert.rejects(controller.start(), (err: unknown) => {
      assert.ok(err instanceof ScreenError && err.problem.code === 'needsConsent');
      assert.equal(err.problem.declined, false);
      assert.deepEqual(err.problem.question, {
        kind: 'replaceContainer',
        backend: 'docker',
        container: `botscreen-${config.workspaceKey}`,
        currentImage: OLD,
        image: NEW,
      });
      return true;
    });
    assert.deepEqual(ours(), [container], 'the container was not removed');
    assert.equal(sh('docker', ['inspect', '-f', '{{.State.Running}}', container]).trim(), 'true');
    assert.equal(controller.status.state, 'stopped');
  });

  test('a person\'s cancel changes nothing; keep starts on the current container', async () => {
    const [container] = ours();
    await assert.rejects(controller.start(answer('cancel')), (err: unknown) => err instanceof ScreenError && err.problem.code === 'needsConsent' && err.problem.declined);
    assert.deepEqual(ours(), [container]);
    const status = await controller.start(answer('keep'));
    assert.equal(status.state, 'running');
    assert.equal(status.sandbox?.id, container);
    assert.equal(configImage(container), OLD);
    await controller.stop();
    assert.equal(asked.length, 2);
  });

  test('a person\'s yes replaces the container with one of the workspace image', async () => {
    const [old] = ours();
    const status = await controller.start(answer('yes'));
    const [replacement] = ours();
    assert.notEqual(replacement, old);
    assert.equal(configImage(replacement), NEW);
    assert.equal(status.sandbox?.id, replacement);
    assert.equal(ours().length, 1, 'the old container is gone, only the new one is left');
  });
});
