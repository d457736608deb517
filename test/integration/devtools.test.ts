// The sandbox browser's DevTools, reached from this machine through an exec-stream forward.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { DEVTOOLS_PORT, openBrowserArgv } from '../../src/core/actions/chromium';
import { withEnv } from '../../src/core/actions/sessionExec';
import { PortForwarder } from '../../src/core/forward';
import { run } from '../../src/core/runner';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { hostProcesses, removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';

/** The forwards this file opens, as the extension's context owns its own. */
const forwarder = new PortForwarder();

describe('DevTools of the sandbox Chromium', () => {
  const config = settings();
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());

  after(async () => {
    await forwarder.close();
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
  });

  test('Chromium runs on the screen as pn with its profile in pn\'s home, DevTools answers on 127.0.0.1 here', async () => {
    await controller.start();
    const { sandbox, screen } = controller.runningSandbox()!;
    const opened = await run(sandbox.exec(withEnv(screen.env, openBrowserArgv()), { interactive: false }), { timeoutMs: 20_000 });
    assert.equal(opened.exitCode, 0, opened.stderr);
    const port = await forwarder.forward(sandbox, DEVTOOLS_PORT);
    const forwardedAt = Date.now();
    await waitFor(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/json/version`).catch(() => undefined);
      return response?.ok === true;
    }, 30_000, 50, 'DevTools /json/version through the forward');
    testLog.warn(`DevTools answered through the forward ${Date.now() - forwardedAt} ms after the browser was started`);
    const info = (await (await fetch(`http://127.0.0.1:${port}/json/version`)).json()) as Record<string, string>;
    assert.match(info.Browser, /Chrom/);
    const browser = sh('docker', ['exec', sandbox.id, 'pgrep', '-a', '-u', 'pn', '-f', 'botscreen-browser']);
    assert.match(browser, /--user-data-dir=\/home\/pn\/\.config\/botscreen-browser/);
    assert.deepEqual(hostProcesses('^/usr/lib/chromium/chromium .*botscreen-browser'), [], 'no browser on this machine');
  });

  test('stopping the screen ends the browser with its display, and closing its forwards leaves no listener', async () => {
    const { sandbox } = controller.runningSandbox()!;
    await controller.stop();
    await waitFor(() => sh('docker', ['exec', sandbox.id, 'pgrep', '-u', 'pn', 'chromium']).trim() === '', 10_000, 50, 'the browser to exit');
    await forwarder.close(sandbox.id);
    assert.deepEqual((await forwarder.list()).filter((f) => f.sandboxId === sandbox.id), []);
  });
});
