// Against a real Docker engine and the real desktop image: the desktop ending inside a sandbox
// that is still there is its own final state (desktopStopped), distinct from a gone sandbox, and
// Start brings the desktop back in the same container.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SandboxBackends } from '../../src/core/backends/registry';
import { RELAY_EXIT_UNREACHABLE } from '../../src/core/relay';
import { ScreenController } from '../../src/core/screen';
import { rfbHandshake } from '../support/rfb';
import { removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';

const config = settings({ geometry: '1024x640' });
const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
after(async () => {
  await controller.stop().catch(() => undefined);
  controller.dispose();
  removeTestContainers(config.workspaceKey);
});

test('Xvnc killed in a live sandbox: the screen is stopped with desktopStopped, not gone, and Start brings it back in the same container', { timeout: 240_000 }, async () => {
  const started = await controller.start();
  assert.equal(started.state, 'running');
  const id = started.sandbox!.id;
  const relay = controller.openRelay();
  await rfbHandshake(relay.stdout, relay.stdin);
  const xvnc = sh('docker', ['exec', id, 'pgrep', '-x', 'Xvnc']).trim();
  sh('docker', ['exec', '-u', 'pn', id, 'kill', '-KILL', xvnc]);
  await relay.exited;
  // What a viewer does after its relay ended: open another one, with backoff, until the status is final.
  const exits: Array<number | null> = [];
  await waitFor(async () => {
    if (controller.status.state !== 'running') {
      return true;
    }
    const retry = controller.openRelay();
    exits.push((await retry.exited).exitCode);
    await new Promise((resolve) => setTimeout(resolve, 500));
    return controller.status.state !== 'running';
  }, 60_000, 0, 'the screen to leave the running state');
  assert.equal(controller.status.state, 'stopped');
  assert.deepEqual(controller.status.problem, { code: 'desktopStopped' });
  assert.ok(exits.includes(RELAY_EXIT_UNREACHABLE), `a relay found the socket unreachable (exits ${exits.join(', ')})`);
  assert.equal(sh('docker', ['inspect', '-f', '{{.State.Running}}', id]).trim(), 'true', 'the sandbox is still there');

  const again = await controller.start();
  assert.equal(again.state, 'running');
  assert.equal(again.sandbox!.id, id, 'the same container');
  assert.notEqual(sh('docker', ['exec', id, 'pgrep', '-x', 'Xvnc']).trim(), xvnc, 'a new Xvnc');
});
