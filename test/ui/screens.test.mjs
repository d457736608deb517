// The Screens overview in real VS Code windows on real sandboxes: two windows (two workspaces of
// one server, so one global storage) each run a screen; the tree in one window lists both with
// live thumbnails (JPEGs decoded by Chromium: the screen's aspect, many colours) and the status
// bar's tooltip shows this window's; a recording docker proves that no grab runs while the tree
// is hidden (collapsed, its default) and that grabs run while it is shown; the lease files are
// the same bytes, inode and mtime after the grabs. Then window B's screen stops: window A's tree
// lists its recording under "Recordings" (time span, size), a click replays it (the replay draws
// the desktop) and the inline Delete, after a confirmation naming it, removes its files.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { openWorkbench, screenshot, sleep, waitFor } from './harness.mjs';
import {
  extensionLog,
  indicator,
  l10nText,
  PANEL_TITLE,
  removeContainersOf,
  replayedEnd,
  screenFrame,
  screenStats,
  startScreenPatiently,
  TITLES,
  withWindow,
  workspaceKey,
} from './botscreen.mjs';
import { runCommand } from './harness.mjs';

// thumbnail.py loads screenshot.py under this name: the word that marks a grab in an argv.
const GRAB_MARK = 'botscreen_screenshot';

/** A docker that logs one line per call (GRAB for a thumbnail grab) and runs the real one. */
function recordingDocker(dir) {
  const log = path.join(dir, 'calls');
  const program = path.join(dir, 'docker-recorder');
  fs.writeFileSync(log, '');
  fs.writeFileSync(program, [
    '#!/bin/bash',
    'kind="$1 $2"',
    `for word in "$@"; do case "$word" in *${GRAB_MARK}*) kind=GRAB;; esac; done`,
    `printf '%s %s\\n' "$(date +%s%3N)" "$kind" >> '${log}'`,
    'exec docker "$@"',
    '',
  ].join('\n'), { mode: 0o755 });
  return { program, grabs: () => fs.readFileSync(log, 'utf8').split('\n').filter((line) => line.endsWith(' GRAB')).length };
}

const screensHeader = (page) => page.locator('.pane-header', { has: page.locator('h3.title', { hasText: /^Screens$/ }) });
const rows = (page) => page.locator('.pane', { has: page.locator('h3.title', { hasText: /^Screens$/ }) }).locator('.monaco-list-row');

/** Shows or hides the Screens tree (expands or collapses its section of the Bot Screen view container). */
async function setTreeShown(page, shown) {
  const header = screensHeader(page);
  await header.waitFor({ timeout: 30_000 });
  if ((await header.getAttribute('aria-expanded')) !== String(shown)) await header.click();
  await waitFor(async () => (await header.getAttribute('aria-expanded')) === String(shown), 10_000, 100, `the Screens tree ${shown ? 'shown' : 'hidden'}`);
}

/** Decodes a data: JPEG in the page (Chromium's decoder): its size, colours (4 bits a channel) and bytes. */
const decodeInPage = (page, src) => page.evaluate(async (src) => {
  const img = new Image();
  img.src = src;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  const seen = new Set();
  for (let i = 0; i < data.length; i += 4) seen.add(((data[i] >> 4) << 8) | ((data[i + 1] >> 4) << 4) | (data[i + 2] >> 4));
  return { width: img.naturalWidth, height: img.naturalHeight, colours: seen.size, bytes: atob(src.slice(src.indexOf(',') + 1)).length };
}, src);

/** The data: URI of a row's icon (its CSS background image), or '' before a thumbnail came. */
const iconOf = (row) => row.locator('.custom-view-tree-node-item-icon').evaluate((el) => {
  const match = /url\(["']?(data:image\/jpeg[^"')]+)/.exec(el.style.backgroundImage);
  return match ? match[1] : '';
}).catch(() => '');

/** The directory of a workspace's screen recording (the extension's global storage). */
const recordingDir = (server, folder) =>
  path.join(server.userDataDir, 'User', 'globalStorage', 'botscreen.bot-screen', 'recordings', workspaceKey(folder));
const recordedFiles = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.bsrec')) : []);

const leaseFile = (server, folder) =>
  path.join(server.userDataDir, 'User', 'globalStorage', 'botscreen.bot-screen', 'leases', `lease-${workspaceKey(folder)}.json`);

/**
 * Hovers `target` until its tooltip shows a JPEG; the tooltip's picture. A hover that starts where
 * the pointer already is moves nothing and shows nothing (and one can be dismissed by a toast
 * appearing), so the pointer leaves and comes back between tries.
 */
async function hoverForPicture(page, target) {
  const picture = page.locator('.monaco-hover img[src^="data:image/jpeg"], .workbench-hover img[src^="data:image/jpeg"]').first();
  for (let attempt = 1; ; attempt++) {
    await page.mouse.move(700, 450);
    await sleep(200);
    await target.hover();
    try {
      await picture.waitFor({ timeout: 7_000 });
      return picture;
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

/**
 * Window B's screen, which recorded, stops: window A's tree lists its recording under
 * "Recordings" with its time span and size; a click replays it; the inline Delete asks, naming
 * it, and removes its files (window A's own recording, being written, stays).
 */
async function checkStoppedRecording(server, page, pageB, folderB) {
  const dirB = recordingDir(server, folderB);
  const dirA = recordingDir(server, server.workspace);
  await waitFor(() => recordedFiles(dirB).length > 0, 30_000, 500, 'window B\'s screen recorded');
  await runCommand(pageB, TITLES.stop);
  await setTreeShown(page, true);
  const group = rows(page).filter({ hasText: new RegExp(`^${l10nText('Recordings')}$`) });
  const recording = rows(page).filter({ hasText: 'workspace-b' });
  await waitFor(async () => (await group.count()) === 1 && (await recording.count()) === 1 && /MB/.test(await recording.textContent()),
    60_000, 250, 'window B\'s stopped screen listed under Recordings');
  const text = await recording.textContent();
  console.log(`# listed recording: ${JSON.stringify(text)}`);
  assert.match(text, /\d+\.\d MB/, 'its size');
  assert.match(text, /\d{1,2}:\d{2}:\d{2}.* – .*\d{1,2}:\d{2}:\d{2}/, 'its time span');
  assert.doesNotMatch(text, new RegExp(l10nText('running')), 'not listed as a running screen any more');
  await screenshot(page, 'ui-screens-recordings');

  // A click replays it: the panel draws the desktop the screen showed.
  await recording.click();
  const drawn = await replayedEnd(page, 1280, 800, 'the replay of window B\'s screen to draw the desktop');
  console.log(`# replay of the stopped screen drew ${drawn.width}x${drawn.height}, ${drawn.colors} colours`);
  await screenshot(page, 'ui-screens-recording-replay');

  // Delete, inline: a confirmation naming what goes, then its files are gone.
  // The tree re-renders its rows when thumbnails refresh; a click that lands while the row is
  // replaced reaches no action, so hover and click again until the confirmation shows.
  const dialog = page.locator('.monaco-dialog-box');
  for (let attempt = 1; ; attempt++) {
    await recording.hover();
    await recording.locator('.action-label.codicon-trash').first().click();
    try {
      await dialog.waitFor({ timeout: 5_000 });
      break;
    } catch (err) {
      if (attempt === 3) throw err;
      console.log(`# the inline Delete reached no action (attempt ${attempt}); again`);
    }
  }
  const question = await dialog.textContent();
  assert.match(question, /workspace-b/, `the confirmation names the recording: ${question}`);
  assert.match(question, new RegExp(`${recordedFiles(dirB).length} `), `and how many files go: ${question}`);
  await dialog.locator('.monaco-button', { hasText: new RegExp(`^${l10nText('Delete')}$`) }).first().click();
  await waitFor(() => recordedFiles(dirB).length === 0, 15_000, 200, 'window B\'s recording deleted');
  // The files go one by one, then the directory: the poll above can land between the two.
  try {
    await waitFor(() => !fs.existsSync(dirB), 5_000, 100, 'window B\'s recording directory gone with its files');
  } catch (err) {
    throw new Error(`${err.message}; left in it: ${JSON.stringify(fs.existsSync(dirB) ? fs.readdirSync(dirB) : [])}`);
  }
  await waitFor(async () => (await recording.count()) === 0 && (await group.count()) === 0, 15_000, 200, 'the Recordings group gone with its only recording');
  assert.ok(recordedFiles(dirA).length > 0, 'window A\'s own recording (being written) stays');
}

test('the Screens tree lists both windows\' screens with thumbnails, grabs only while shown, and never touches a lease', { timeout: 900_000 }, async () => {
  const work = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'botscreen-screens-ui-'));
  const docker = recordingDocker(work);
  let second;
  let folderB;
  try {
    await withWindow({ 'botScreen.sandbox.backend': 'docker', 'botScreen.sandbox.docker.path': docker.program, 'botScreen.idleStopMinutes': 0 }, async (server, page) => {
      try {
        folderB = path.join(server.dir, 'workspace-b');
        fs.mkdirSync(folderB);
        second = await openWorkbench({ ...server, workspace: folderB });
        await indicator(second.page).waitFor({ timeout: 60_000 });
        await startScreenPatiently(page);
        await startScreenPatiently(second.page);
        for (const p of [page, second.page]) {
          const frame = await screenFrame(p, 60_000);
          await waitFor(async () => (await screenStats(frame))?.framesDrawn > 0, 180_000, 250, 'the screen to draw');
        }

        // Hidden (the tree's default): both screens ran for a while and nothing grabbed.
        for (const p of [page, second.page]) assert.equal(await screensHeader(p).getAttribute('aria-expanded'), 'false', 'collapsed by default');
        // A lease file for window A (a person took control and handed back), so a write would show.
        await runCommand(page, TITLES.takeControl);
        await waitFor(() => fs.existsSync(leaseFile(server, server.workspace)), 20_000, 100, 'the lease file');
        await runCommand(page, TITLES.handBack);
        await waitFor(() => JSON.parse(fs.readFileSync(leaseFile(server, server.workspace), 'utf8')).holder === 'agent', 20_000, 100, 'control handed back');
        await sleep(8_000);
        assert.equal(docker.grabs(), 0, 'no grab while the tree is hidden');
        const leaseA = leaseFile(server, server.workspace);
        const before = { stat: fs.statSync(leaseA), bytes: fs.readFileSync(leaseA) };
        assert.equal(fs.existsSync(leaseFile(server, folderB)), false, 'window B never took control');

        // Shown in window A: both screens listed, each with a thumbnail.
        await setTreeShown(page, true);
        await waitFor(async () => (await rows(page).count()) === 2, 30_000, 200, 'two screens in the tree');
        const labels = await rows(page).allTextContents();
        const own = rows(page).filter({ hasText: l10nText('{0} (this window)').replace('{0}', path.basename(server.workspace)) });
        const other = rows(page).filter({ hasText: 'workspace-b' });
        assert.equal(await own.count(), 1, `this window's screen in ${JSON.stringify(labels)}`);
        assert.equal(await other.count(), 1, `the other window's screen in ${JSON.stringify(labels)}`);
        for (const row of [own, other]) {
          assert.match(await row.textContent(), /docker: botscreen-[0-9a-f]{12}/);
          assert.match(await row.textContent(), new RegExp(l10nText('running')));
          assert.match(await row.textContent(), new RegExp(l10nText('the agent has control')));
        }
        const icons = {};
        for (const [name, row] of [['own', own], ['other', other]]) {
          icons[name] = await waitFor(async () => (await iconOf(row)) || undefined, 60_000, 250, `the ${name} screen's thumbnail icon`);
          const icon = await decodeInPage(page, icons[name]);
          assert.deepEqual([icon.width, icon.height], [32, 20], `the icon has the screen's aspect (1280x800): ${JSON.stringify(icon)}`);
          assert.ok(icon.colours >= 8, `the icon shows the desktop: ${JSON.stringify(icon)}`);
        }
        // The tooltip: a bigger JPEG of the same screen.
        const hoverImg = await hoverForPicture(page, other.locator('.label-name').first());
        const picture = await decodeInPage(page, await hoverImg.getAttribute('src'));
        console.log(`# tooltip thumbnail: ${JSON.stringify(picture)}`);
        assert.deepEqual([picture.width, picture.height], [320, 200], 'the tooltip picture has the screen\'s aspect');
        assert.ok(picture.colours > 20 && picture.bytes > 2000, `a real picture of the desktop: ${JSON.stringify(picture)}`);
        await screenshot(page, 'ui-screens-tooltip');
        await page.mouse.move(700, 450);

        // Live: the icons are grabbed again while shown.
        const grabsShown = docker.grabs();
        assert.ok(grabsShown >= 2, `grabs ran while shown (${grabsShown})`);
        await waitFor(() => docker.grabs() >= grabsShown + 2, 30_000, 250, 'the next round of grabs');

        // The status bar's tooltip shows this window's thumbnail.
        const statusImg = await hoverForPicture(page, indicator(page));
        const status = await decodeInPage(page, await statusImg.getAttribute('src'));
        assert.deepEqual([status.width, status.height], [320, 200]);
        await screenshot(page, 'ui-screens-statusbar');
        await page.mouse.move(700, 450);

        // Another window's screen: clicking says where it belongs instead of opening it here.
        await other.click();
        await page.locator('.notification-toast', { hasText: 'workspace-b' }).first().waitFor({ timeout: 20_000 });
        // This window's screen: clicking opens its editor panel.
        assert.equal(await page.locator('.tabs-container .tab', { hasText: PANEL_TITLE }).count(), 0, 'no panel yet');
        await own.click();
        await page.locator('.tabs-container .tab', { hasText: PANEL_TITLE }).first().waitFor({ timeout: 30_000 });
        // This window's screen offers Stop and Take Control inline; the other's offers neither.
        // Both offer Open Recording: recordings of every window's screens are this user's to replay.
        await own.hover();
        assert.ok(await own.locator('.action-label.codicon-debug-stop').count() >= 1, 'Stop on this window\'s screen');
        assert.ok(await own.locator('.action-label.codicon-unlock').count() >= 1, 'Take Control on this window\'s screen');
        assert.ok(await own.locator('.action-label.codicon-history').count() >= 1, 'Open Recording on this window\'s screen');
        await other.hover();
        assert.equal(await other.locator('.action-label.codicon-debug-stop').count(), 0, 'no Stop on another window\'s screen');
        assert.ok(await other.locator('.action-label.codicon-history').count() >= 1, 'Open Recording on another window\'s screen');

        // Hidden again: once a grab under way has ended, none starts.
        await setTreeShown(page, false);
        await sleep(3_000);
        const grabsHidden = docker.grabs();
        await sleep(10_000);
        assert.equal(docker.grabs(), grabsHidden, 'no grab started while hidden again');

        const after = fs.statSync(leaseA);
        assert.equal(after.mtimeMs, before.stat.mtimeMs, 'the lease file was not written by any grab');
        assert.equal(after.ino, before.stat.ino, 'nor replaced');
        assert.deepEqual(fs.readFileSync(leaseA), before.bytes);
        assert.equal(fs.existsSync(leaseFile(server, folderB)), false, 'window B\'s screen still has no lease file');
        console.log(`# grabs: ${grabsShown} by the first look, ${grabsHidden} in all`);

        await checkStoppedRecording(server, page, second.page, folderB);
      } catch (err) {
        console.log(`# the extension's log:\n${extensionLog(server).replace(/^/gm, '# ')}`);
        if (second) await screenshot(second.page, 'ui-screens-second-failed').catch(() => {});
        throw err;
      }
    }, { failureShot: 'ui-screens-failed' });
  } finally {
    await second?.close();
    if (folderB) removeContainersOf(folderB);
    fs.rmSync(work, { recursive: true, force: true });
  }
});
