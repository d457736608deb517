// Bot Screen in a real VS Code (VS Code Server 1.99.3 web workbench), driven through Debian's
// Chromium as a user would: the command palette, the Screen view, the status bar. The sandbox is
// a real container of the real desktop image; the gateway test runs the desktop on this machine.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import {
  REPO_ROOT, canvasColorCount, SCREEN_FRAME, findWebviewFrame, openWorkbench, runCommand, screenshot, startServer, waitFor,
} from './harness.mjs';
import { containersOf, hostProcesses, removeContainersOf, sh, workspaceKey } from './botscreen.mjs';

const VSIX = process.env.BOTSCREEN_VSIX || path.join(REPO_ROOT, 'bot-screen.vsix');
const WIDTH = 1280;
const HEIGHT = 800;


/** Opens a window with Bot Screen installed; returns what the test needs and a cleanup. */
async function openWindow(userSettings) {
  assert.ok(fs.existsSync(VSIX), `${VSIX} exists (npm run package)`);
  const server = await startServer({ vsixPath: VSIX, userSettings: { 'botScreen.statusBar.visible': 'always', ...userSettings } });
  const workbench = await openWorkbench(server).catch(async (err) => {
    await server.stop();
    throw err;
  });
  // The placement indicator shows once Bot Screen is active: its commands are then in the palette.
  await workbench.page.locator('.statusbar-item', { hasText: 'Screen:' }).first().waitFor({ timeout: 60_000 });
  return {
    server,
    page: workbench.page,
    async close() {
      await workbench.close();
      await server.stop();
    },
  };
}

/** The Screen view's frame, once its canvas shows a desktop (a real one: many colours). */
async function waitForDesktop(page, what) {
  const frame = await findWebviewFrame(page, SCREEN_FRAME, 60_000);
  const canvas = await waitFor(async () => {
    const c = await canvasColorCount(frame, { minWidth: WIDTH });
    return c.width === WIDTH && c.height === HEIGHT && c.colors >= 10 ? c : undefined;
  }, 30_000, 250, `${what}: a ${WIDTH}x${HEIGHT} canvas with a desktop on it`);
  return { frame, canvas };
}

const viewText = (frame, id) => frame.locator(`#${id}`).textContent();

test('Start Screen from the palette shows the docker sandbox desktop; Stop stops it', { timeout: 240_000 }, async () => {
  const win = await openWindow({ 'botScreen.sandbox.backend': 'docker' });
  const created = () => containersOf(win.server.workspace);
  try {
    const { page } = win;
    const startedAt = Date.now();
    await runCommand(page, 'Bot Screen: Start Screen');
    const { frame, canvas } = await waitForDesktop(page, 'docker');
    console.log(`# desktop visible ${Date.now() - startedAt} ms after the command (${canvas.colors} colours)`);
    await screenshot(page, 'ui-docker-screen');

    assert.match(await viewText(frame, 'where'), /inside the docker sandbox/);
    assert.equal(await viewText(frame, 'badge'), 'live');
    const status = await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().textContent();
    assert.match(status, /docker sandbox/);
    const [container] = created();
    assert.ok(container, 'a sandbox container was created');
    assert.notEqual(sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim(), '', 'Xvnc runs in the container');
    assert.deepEqual(hostProcesses(`/${workspaceKey(win.server.workspace)}/launcher\\.sh`), [], 'no launcher on this machine');

    await runCommand(page, 'Bot Screen: Stop Screen');
    await waitFor(async () => (await viewText(frame, 'badge')) === 'stopped', 15_000, 200, 'the view to say stopped');
    assert.equal(sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim(), '', 'no Xvnc left in the container');
    await screenshot(page, 'ui-docker-stopped');
  } finally {
    await win.close();
    removeContainersOf(win.server.workspace);
  }
});

test('gateway placement runs the same screen on this machine', { timeout: 240_000 }, async () => {
  const win = await openWindow({ 'botScreen.sandbox.backend': 'docker', 'botScreen.placement': 'gateway' });
  // This window's screen on this machine: its Xvnc serves a socket in the workspace's runtime dir.
  const hostXvnc = () => hostProcesses(`^Xvnc .*/${workspaceKey(win.server.workspace)}/rfb\\.sock`);
  try {
    const { page } = win;
    await runCommand(page, 'Bot Screen: Start Screen');
    const { frame } = await waitForDesktop(page, 'gateway');
    await screenshot(page, 'ui-gateway-screen');
    // This window is a served VS Code: "this machine" is the server, and the view says so.
    assert.match(await viewText(frame, 'where'), /on the VS Code server \(127\.0\.0\.1:\d+\) \(placement: gateway\)/);
    const status = await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().textContent();
    assert.match(status, /VS Code server/);
    assert.equal(hostXvnc().length, 1, 'one Xvnc on this machine');
    assert.deepEqual(containersOf(win.server.workspace), [], 'no container for a gateway screen');

    await runCommand(page, 'Bot Screen: Stop Screen');
    await waitFor(async () => (await viewText(frame, 'badge')) === 'stopped', 15_000, 200, 'the view to say stopped');
    await waitFor(() => hostXvnc().length === 0, 5_000, 200, 'the host Xvnc to end');
  } finally {
    await win.close();
  }
});

