// Bot Screen in a real VS Code (VS Code Server 1.99.3 web workbench), driven through Debian's
// Chromium as a user would: the command palette, the Screen view, the status bar. The sandbox is
// a real container of the real desktop image; the gateway test runs the desktop on this machine.
import assert from 'node:assert/strict';
import test from 'node:test';
import { canvasColorCount, runCommand, screenshot, sh, waitFor } from './harness.mjs';
import {
  TITLES, containersOf, hostProcesses, indicator, screenFrame, withWindow, workspaceKey,
} from './botscreen.mjs';

const WIDTH = 1280;
const HEIGHT = 800;

/** The Screen view's frame, once its canvas shows a desktop (a real one: many colours). */
async function waitForDesktop(page, what) {
  const frame = await screenFrame(page, 60_000);
  const canvas = await waitFor(async () => {
    const c = await canvasColorCount(frame, { minWidth: WIDTH });
    return c.width === WIDTH && c.height === HEIGHT && c.colors >= 10 ? c : undefined;
  }, 30_000, 250, `${what}: a ${WIDTH}x${HEIGHT} canvas with a desktop on it`);
  return { frame, canvas };
}

const viewText = (frame, id) => frame.locator(`#${id}`).textContent();

test('Start Screen from the palette shows the docker sandbox desktop; Stop stops it', { timeout: 240_000 }, async () => {
  await withWindow({ 'botScreen.sandbox.backend': 'docker' }, async (server, page) => {
    const startedAt = Date.now();
    await runCommand(page, TITLES.start);
    const { frame, canvas } = await waitForDesktop(page, 'docker');
    console.log(`# desktop visible ${Date.now() - startedAt} ms after the command (${canvas.colors} colours)`);
    await screenshot(page, 'ui-docker-screen');

    assert.match(await viewText(frame, 'where'), /inside the docker sandbox/);
    assert.equal(await viewText(frame, 'badge'), 'live');
    const status = await indicator(page).textContent();
    assert.match(status, /docker sandbox/);
    const [container] = containersOf(server.workspace);
    assert.ok(container, 'a sandbox container was created');
    assert.notEqual(sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim(), '', 'Xvnc runs in the container');
    assert.deepEqual(hostProcesses(`/${workspaceKey(server.workspace)}/launcher\\.sh`), [], 'no launcher on this machine');

    await runCommand(page, TITLES.stop);
    await waitFor(async () => (await viewText(frame, 'badge')) === 'stopped', 15_000, 200, 'the view to say stopped');
    assert.equal(sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim(), '', 'no Xvnc left in the container');
    await screenshot(page, 'ui-docker-stopped');
  });
});

test('gateway placement runs the same screen on this machine', { timeout: 240_000 }, async () => {
  await withWindow({ 'botScreen.sandbox.backend': 'docker', 'botScreen.placement': 'gateway' }, async (server, page) => {
    // This window's screen on this machine: its Xvnc serves a socket in the workspace's runtime dir.
    const hostXvnc = () => hostProcesses(`^Xvnc .*/${workspaceKey(server.workspace)}/rfb\\.sock`);
    await runCommand(page, TITLES.start);
    const { frame } = await waitForDesktop(page, 'gateway');
    await screenshot(page, 'ui-gateway-screen');
    // This window is a served VS Code: "this machine" is the server, and the view says so.
    assert.match(await viewText(frame, 'where'), /on the VS Code server \(127\.0\.0\.1:\d+\) \(placement: gateway\)/);
    const status = await indicator(page).textContent();
    assert.match(status, /VS Code server/);
    assert.equal(hostXvnc().length, 1, 'one Xvnc on this machine');
    assert.deepEqual(containersOf(server.workspace), [], 'no container for a gateway screen');

    await runCommand(page, TITLES.stop);
    await waitFor(async () => (await viewText(frame, 'badge')) === 'stopped', 15_000, 200, 'the view to say stopped');
    await waitFor(() => hostXvnc().length === 0, 5_000, 200, 'the host Xvnc to end');
  });
});
