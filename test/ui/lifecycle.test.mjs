// Reload survival, the settings migration and the image question, in a real VS Code.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import {
  SCREEN_FRAME, canvasColorCount, findWebviewFrame, runCommand, screenStats, screenshot, waitFor,
} from './harness.mjs';
import { containersOf, sh, withWindow, workspaceKey } from './botscreen.mjs';


/**
 * The Screen view's frame once it shows the desktop. Frames are looked up again on every try,
 * and only documents created after `since` count: around a reload the old frame is still there
 * for a moment, then detached.
 */
async function desktopFrame(page, what, since = 0) {
  return waitFor(async () => {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      const ours = await frame.evaluate(({ stats, t }) => document.querySelector(stats) !== null && performance.timeOrigin >= t, { stats: SCREEN_FRAME, t: since }).catch(() => false);
      if (!ours) continue;
      const c = await canvasColorCount(frame, { minWidth: 1280 }).catch(() => undefined);
      if (c && c.width === 1280 && c.colors >= 10) return frame;
    }
    return undefined;
  }, 60_000, 100, `${what}: the desktop on the canvas`);
}

/** Developer: Reload Window, waiting for the new page (not the old one still on screen). */
async function reloadWindow(page) {
  const navigated = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: 60_000 });
  await runCommand(page, 'Developer: Reload Window');
  await navigated;
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().waitFor({ timeout: 60_000 });
}

const xvncPid = (container) => sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim();

test('after Developer: Reload Window the view shows the same Xvnc again', { timeout: 240_000 }, async () => {
  await withWindow({}, async (server, page) => {
    await runCommand(page, 'Bot Screen: Start Screen');
    await desktopFrame(page, 'before the reload');
    const [container] = containersOf(server.workspace);
    const pid = xvncPid(container);
    assert.match(pid, /^\d+$/);

    const reloadedAt = Date.now();
    await reloadWindow(page);
    const frame = await desktopFrame(page, 'after the reload', reloadedAt);
    const documentToFrame = Math.round((await screenStats(frame)).firstFrameAt - (await frame.evaluate(() => performance.timeOrigin)));
    console.log(`# desktop back on the canvas ${Date.now() - reloadedAt} ms after the reload command, ${documentToFrame} ms after the view's document was created`);
    await screenshot(page, 'ui-after-reload');
    assert.equal(xvncPid(container), pid, 'the same Xvnc process');
    assert.equal((await screenStats(frame)).hostState, 'running');
    assert.deepEqual(containersOf(server.workspace), [container], 'no new container');

    await runCommand(page, 'Bot Screen: Stop Screen');
    await waitFor(() => xvncPid(container) === '', 15_000, 200, 'Stop to end Xvnc after the reload');
  });
});

test('a retired default image in the settings is removed; a custom image stays', { timeout: 240_000 }, async () => {
  const settingsFile = (server) => path.join(server.userDataDir, 'User', 'settings.json');
  const imageSetting = async (server) => JSON.parse(await fs.readFile(settingsFile(server), 'utf8'))['botScreen.sandbox.docker.image'];
  await withWindow({ 'botScreen.sandbox.docker.image': 'botscreen/sandbox:bookworm' }, async (server, page) => {
    await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().waitFor({ timeout: 30_000 });
    await waitFor(async () => (await imageSetting(server)) === undefined, 15_000, 200, 'the retired default to be unset');
  });
  await withWindow({ 'botScreen.sandbox.docker.image': 'example.org/team/desktop:2' }, async (server, page) => {
    await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().waitFor({ timeout: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(await imageSetting(server), 'example.org/team/desktop:2');
  });
});

test('a container on another image than the default: the view asks, Keep pins the current image', { timeout: 240_000 }, async () => {
  const OLD = 'botscreen/sandbox:ui-switch-old';
  sh('docker', ['tag', 'botscreen/sandbox:desktop', OLD]);
  try {
    await withWindow({}, async (server, page) => {
      // A sandbox of ours for this workspace, created earlier from an older image.
      const key = workspaceKey(server.workspace);
      sh('docker', ['run', '-d', '--init', '--name', `botscreen-${key}`, '--label', 'dev.botscreen.managed=1',
        '--label', `dev.botscreen.workspace=${key}`, OLD, 'sleep', 'infinity']);
      // Without a marker, window start calls no Docker at all: the question comes with Start,
      // in the Screen view Start reveals.
      await runCommand(page, 'Bot Screen: Start Screen');
      const frame = await findWebviewFrame(page, SCREEN_FRAME, 60_000);
      const keep = frame.locator('button[data-action="keepImage"]');
      await keep.waitFor({ timeout: 90_000 });
      assert.equal(await frame.locator('button[data-action="switchImage"]').count(), 1);
      assert.match(await frame.locator('#detail').textContent(), /still runs botscreen\/sandbox:ui-switch-old.*packages installed inside the container do not/s);
      await screenshot(page, 'ui-image-question');
      await keep.click();
      await waitFor(async () => {
        const saved = JSON.parse(await fs.readFile(path.join(server.userDataDir, 'User', 'settings.json'), 'utf8'));
        return saved['botScreen.sandbox.docker.image'] === OLD;
      }, 15_000, 200, 'Keep to pin the current image');
      await keep.waitFor({ state: 'detached', timeout: 15_000 });
    });
  } finally {
    sh('docker', ['rmi', OLD]);
  }
});
