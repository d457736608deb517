// Bot Screen in a real VS Code (VS Code Server 1.99.3 web workbench), driven through Debian's
// Chromium as a user would: the command palette, the Screen view, the status bar. The sandbox is
// a real container of the real desktop image; the gateway test runs the desktop on this machine.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import {
  REPO_ROOT, canvasColorCount, findWebviewFrame, openWorkbench, runCommand, screenshot, startServer, waitFor,
} from './harness.mjs';

const VSIX = process.env.BOTSCREEN_VSIX || path.join(REPO_ROOT, 'bot-screen.vsix');
const WIDTH = 1280;
const HEIGHT = 800;

function sh(command, args) {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    return String(err.stdout ?? '');
  }
}

const managedContainers = () => sh('docker', ['ps', '-aq', '--no-trunc', '--filter', 'label=dev.botscreen.managed=1']).split('\n').filter(Boolean);

/** Opens a window with Bot Screen installed; returns what the test needs and a cleanup. */
async function openWindow(userSettings) {
  assert.ok(fs.existsSync(VSIX), `${VSIX} exists (npm run package)`);
  const server = await startServer({ vsixPath: VSIX, userSettings });
  const workbench = await openWorkbench(server).catch(async (err) => {
    await server.stop();
    throw err;
  });
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
  const frame = await findWebviewFrame(page, 'botScreen', 30_000);
  const canvas = await waitFor(async () => {
    const c = await canvasColorCount(frame, { minWidth: WIDTH });
    return c.width === WIDTH && c.height === HEIGHT && c.colors >= 10 ? c : undefined;
  }, 30_000, 250, `${what}: a ${WIDTH}x${HEIGHT} canvas with a desktop on it`);
  return { frame, canvas };
}

const viewText = (frame, id) => frame.locator(`#${id}`).textContent();

test('Start Screen from the palette shows the docker sandbox desktop; Stop stops it', { timeout: 240_000 }, async () => {
  const before = new Set(managedContainers());
  const win = await openWindow({ 'botScreen.sandbox.backend': 'docker' });
  const created = () => managedContainers().filter((id) => !before.has(id));
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
    assert.equal(sh('pgrep', ['-f', `botscreen-\\d+/${'[0-9a-f]'.repeat(12)}/launcher.sh`]).trim(), '', 'no launcher on this machine');

    await runCommand(page, 'Bot Screen: Stop Screen');
    await waitFor(async () => (await viewText(frame, 'badge')) === 'stopped', 15_000, 200, 'the view to say stopped');
    assert.equal(sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim(), '', 'no Xvnc left in the container');
    await screenshot(page, 'ui-docker-stopped');
  } finally {
    await win.close();
    const ours = created();
    if (ours.length > 0) {
      sh('docker', ['rm', '-f', ...ours]);
    }
  }
});

test('gateway placement runs the same screen on this machine', { timeout: 240_000 }, async () => {
  const hostXvnc = () => sh('pgrep', ['-a', '-x', 'Xvnc']).split('\n').filter(Boolean);
  const before = hostXvnc();
  const containersBefore = managedContainers().length;
  const win = await openWindow({ 'botScreen.sandbox.backend': 'docker', 'botScreen.placement': 'gateway' });
  try {
    const { page } = win;
    await runCommand(page, 'Bot Screen: Start Screen');
    const { frame } = await waitForDesktop(page, 'gateway');
    await screenshot(page, 'ui-gateway-screen');
    assert.match(await viewText(frame, 'where'), /on this machine \(placement: gateway\)/);
    const status = await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().textContent();
    assert.match(status, /this machine/);
    assert.equal(hostXvnc().length, before.length + 1, 'one Xvnc on this machine');
    assert.equal(managedContainers().length, containersBefore, 'no container for a gateway screen');

    await runCommand(page, 'Bot Screen: Stop Screen');
    await waitFor(async () => (await viewText(frame, 'badge')) === 'stopped', 15_000, 200, 'the view to say stopped');
    await waitFor(() => hostXvnc().length === before.length, 5_000, 200, 'the host Xvnc to end');
  } finally {
    await win.close();
  }
});
