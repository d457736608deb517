// Bot Screen in a real VS Code (VS Code Server 1.99.3 web workbench), driven through Debian's
// Chromium as a user would: the command palette, the Screen view, the status bar. The sandbox is
// a real container of the real desktop image; the gateway test runs the desktop on this machine.
import assert from 'node:assert/strict';
import test from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { canvasColorCount, runCommand, screenshot, sh, waitFor } from './harness.mjs';
import {
  TITLES, containersOf, hostProcesses, indicator, l10nText, replayedEnd, screenFrame, withWindow, workspaceKey,
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

/** The flight recorder's status bar item (src/recording.ts). */
const recorderItem = (page) => page.locator('[id="botscreen.bot-screen.botScreen.recorder"]');

/** Bytes of this workspace's screen recording on disk (the extension's global storage). */
function recordedBytes(server) {
  const dir = path.join(server.userDataDir, 'User', 'globalStorage', 'botscreen.bot-screen', 'recordings', workspaceKey(server.workspace));
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.bsrec')) : [];
  return names.reduce((sum, n) => sum + (fs.statSync(path.join(dir, n), { throwIfNoEntry: false })?.size ?? 0), 0);
}

/**
 * The flight recorder while the screen runs: it records without being asked, pauses and resumes
 * from the palette (the status bar item says which), and Open Recording replays it in a panel.
 */
async function checkRecorder(server, page) {
  await waitFor(async () => /REC/.test((await recorderItem(page).textContent().catch(() => '')) ?? ''), 15_000, 200, 'the REC item');
  await waitFor(() => recordedBytes(server) > 50_000, 30_000, 500, 'a recording with the first full screen');
  await runCommand(page, TITLES.pauseRecording);
  await waitFor(async () => ((await recorderItem(page).textContent()) ?? '').includes(l10nText('Recording paused')), 10_000, 200, 'the item to say paused');
  await new Promise((r) => setTimeout(r, 1000));
  const paused = recordedBytes(server);
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(recordedBytes(server), paused, 'nothing is written while paused');
  await runCommand(page, TITLES.resumeRecording);
  await waitFor(() => recordedBytes(server) > paused, 30_000, 500, 'recording again after resume');

  // The recorder's process killed under it: the item stops saying it records (a warning with the
  // reason), and says so again once the new process the extension starts after 10 s records.
  const recorders = () => hostProcesses(`${server.extensionsDir}/.*/dist/recorder\\.js`);
  const [victim] = await waitFor(() => recorders().length === 1 && recorders(), 10_000, 200, 'one recorder process');
  sh('kill', ['-KILL', victim.split(' ')[0]]);
  const icon = (name) => recorderItem(page).locator(`.codicon-${name}`).count();
  await waitFor(async () => (await icon('warning')) === 1 && (await icon('record')) === 0, 5_000, 100, 'the item to warn that the recorder is lost');
  // The item's accessible label is its tooltip (on the item or on its inner link).
  const tooltip = await recorderItem(page).evaluate((el) => el.getAttribute('aria-label') ?? el.querySelector('[aria-label]')?.getAttribute('aria-label'));
  assert.match(tooltip ?? '', /SIGKILL/, `the item says why: ${tooltip}`);
  const lost = recordedBytes(server);
  await waitFor(async () => (await icon('record')) === 1 && recorders().length === 1 && recordedBytes(server) > lost, 30_000, 250, 'a new recorder recording, the item saying REC again');
  console.log(`# recorder killed: the item said ${JSON.stringify(tooltip)}; recording again`);

  await runCommand(page, TITLES.openRecording);
  const { widget } = await pickerOf(page);
  const row = widget.locator('.quick-input-list .monaco-list-row', { hasText: l10nText("This workspace's screen") }).first();
  await row.click();
  const drawn = await replayedEnd(page, WIDTH, HEIGHT, 'the replay to draw the desktop');
  console.log(`# replay panel drew a ${drawn.width}x${drawn.height} desktop (${drawn.colors} colours)`);
  await screenshot(page, 'ui-replay-panel');
}

/** The quick pick a command opened (Open Recording's list of recordings). */
async function pickerOf(page) {
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 10_000 });
  return { widget };
}

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
    await checkRecorder(server, page);

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
