// Commands and views that fit VS Code, in a real VS Code: the palette offers only what applies
// now, the Screen view's … menu, the editor panel's title buttons, the panel beside the editor
// and back after a reload, and the "Bot Screen sandbox" terminal profile.
import assert from 'node:assert/strict';
import test from 'node:test';
import {
  canvasColorCount, openPalette, runCommand, screenshot, sh, sleep, updateSettings, waitFor,
} from './harness.mjs';
import {
  TERMINAL_PROFILE, TITLES, commandLabel, containersOf, reloadWindow, sandboxTerminalName, screenStats, screenViewActions, withWindow,
} from './botscreen.mjs';

/**
 * Whether the command palette lists a command with exactly this title. The list is read once it
 * holds rows and has stopped changing (a hidden command leaves "No matching commands" or others).
 */
async function paletteHas(page, title) {
  const { widget, input } = await openPalette(page, title);
  const labels = () => widget.locator('.quick-input-list .monaco-list-row .label-name').allTextContents();
  let last = '';
  const settled = await waitFor(async () => {
    const now = (await labels()).map((l) => l.trim());
    const same = now.length > 0 && JSON.stringify(now) === last;
    last = JSON.stringify(now);
    return same ? now : undefined;
  }, 10_000, 300, `the palette's list for "${title}"`);
  await page.keyboard.press('Escape');
  await input.waitFor({ state: 'hidden', timeout: 10_000 });
  return settled.includes(title);
}

/**
 * The webview frame of the Screen view (side bar) or of the editor panel, picked by content: only
 * the side bar offers "Open in Editor".
 */
async function viewerFrame(page, { inEditor, since = 0, what }) {
  return waitFor(async () => {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      // Only a document that has its status (the actions are empty before) can be told apart.
      const match = await screenStats(frame).then(async (stats) => stats !== undefined
        && stats.hostState !== ''
        && frame.evaluate(({ inEditor, since }) => performance.timeOrigin >= since
          && Boolean(document.querySelector('#actions [data-action="openInEditor"]')) !== inEditor, { inEditor, since })).catch(() => false);
      if (match) return frame;
    }
    return undefined;
  }, 60_000, 200, what);
}

const desktopDrawn = async (frame) => {
  const c = await canvasColorCount(frame, { minWidth: 1280 }).catch(() => undefined);
  return Boolean(c && c.width === 1280 && c.colors >= 10);
};

test('the palette offers only what applies; the view\'s … menu; the panel\'s title buttons', { timeout: 600_000 }, async () => {
  await withWindow({}, async (server, page) => {
    // Stopped, the agent in control, no image question, a sandbox placement.
    assert.equal(await paletteHas(page, TITLES.start), true, 'Start is offered (the check can see a command)');
    assert.equal(await paletteHas(page, TITLES.stop), false, 'no Stop while stopped');
    assert.equal(await paletteHas(page, TITLES.handBack), false, 'no Hand Back while the agent holds control');
    assert.equal(await paletteHas(page, TITLES.switchImage), false, 'no Switch without a pending switch');
    assert.equal(await paletteHas(page, TITLES.keepImage), false, 'no Keep without a pending switch');
    assert.equal(await paletteHas(page, TITLES.installHostDesktop), false, 'no Install Desktop for a sandbox screen');
    await updateSettings(server, { 'botScreen.placement': 'gateway' });
    await waitFor(() => paletteHas(page, TITLES.installHostDesktop), 15_000, 500, 'Install Desktop once the screen belongs on this machine');
    await updateSettings(server, { 'botScreen.placement': 'auto' });
    await waitFor(async () => !(await paletteHas(page, TITLES.installHostDesktop)), 15_000, 500, 'Install Desktop gone again');

    // Save Screenshot starts the screen like the other screen commands; its save dialog is cancelled.
    await runCommand(page, TITLES.saveScreenshot);
    const sidebar = await viewerFrame(page, { inEditor: false, what: 'the Screen view' });
    await waitFor(() => desktopDrawn(sidebar), 90_000, 300, 'Save Screenshot to start the screen');
    await page.keyboard.press('Escape');
    assert.equal(await paletteHas(page, TITLES.stop), true, 'Stop while running');
    assert.equal(await paletteHas(page, TITLES.handBack), false, 'no Hand Back while the agent holds control');

    // Take Control from the palette: now Hand Back is offered, Take Control is not.
    await runCommand(page, TITLES.takeControl);
    await waitFor(async () => (await screenStats(sidebar)).inControl, 10_000, 100, 'the Screen view to hold control');
    assert.equal(await paletteHas(page, TITLES.handBack), true, 'Hand Back after Take Control');
    assert.equal(await paletteHas(page, TITLES.takeControl), false, 'no Take Control while holding it');
    await runCommand(page, TITLES.handBack);
    await waitFor(async () => !(await screenStats(sidebar)).inControl, 10_000, 100, 'control back with the agent');
    assert.equal(await paletteHas(page, TITLES.handBack), false, 'no Hand Back once handed back');

    // The Screen view's … menu.
    await (await screenViewActions(page)).locator('.action-label.codicon-toolbar-more').first().click();
    const menu = page.locator('.monaco-menu-container .monaco-menu .actions-container').first();
    await menu.waitFor({ timeout: 10_000 });
    const entries = (await menu.locator('.action-item .action-label:not(.separator)').allTextContents()).map((l) => l.trim()).filter(Boolean);
    await screenshot(page, 'ui-menus-view-more');
    await page.keyboard.press('Escape');
    // The recorder's entries: Open Recording, and Pause Recording while it records (src/recording.ts).
    assert.deepEqual(entries, ['openSandboxTerminal', 'openBrowser', 'saveScreenshot', 'connectExternalViewer', 'copyDevToolsUrl', 'openRecording', 'pauseRecording', 'showLogs'].map((id) => commandLabel(id)));

    // The editor panel's title buttons: Take Control, then Hand Back, and Save Screenshot.
    await runCommand(page, TITLES.openInEditor);
    const panel = await viewerFrame(page, { inEditor: true, what: 'the editor panel' });
    await waitFor(async () => (await screenStats(panel)).connection === 'live', 30_000, 200, 'the panel to be live');
    const button = (label) => page.locator(`.part.editor .editor-group-container.active .editor-actions .action-label[aria-label^="${label}"]`);
    await button(commandLabel('saveScreenshot')).waitFor({ timeout: 10_000 });
    await button(commandLabel('takeControl')).click();
    await waitFor(async () => (await screenStats(panel)).inControl, 10_000, 100, 'the panel to hold control');
    await screenshot(page, 'ui-menus-editor-title');
    await button(commandLabel('handBack')).click();
    await waitFor(async () => !(await screenStats(panel)).inControl, 10_000, 100, 'the panel to hand back');
    await button(commandLabel('takeControl')).waitFor({ timeout: 10_000 });
    assert.equal(await button(commandLabel('handBack')).count(), 0);
  });
});

test('the editor panel opens beside the editor and comes back live after a reload; gone stays said', { timeout: 600_000 }, async () => {
  await withWindow({}, async (server, page) => {
    await runCommand(page, TITLES.start);
    await waitFor(async () => desktopDrawn(await viewerFrame(page, { inEditor: false, what: 'the Screen view' })), 90_000, 300, 'the desktop');
    await runCommand(page, 'File: New Untitled Text File');
    await page.locator('.part.editor .monaco-editor').first().waitFor({ timeout: 10_000 });
    await runCommand(page, TITLES.openInEditor);
    const before = await viewerFrame(page, { inEditor: true, what: 'the editor panel' });
    await waitFor(() => desktopDrawn(before), 30_000, 200, 'the panel to draw the desktop');
    assert.equal(await page.locator('.part.editor .editor-group-container').count(), 2, 'the panel opened beside the text editor');

    const reloadedAt = Date.now();
    await reloadWindow(page);
    const after = await viewerFrame(page, { inEditor: true, since: reloadedAt, what: 'the restored editor panel' });
    await waitFor(() => desktopDrawn(after), 60_000, 200, 'the restored panel to draw the desktop');
    console.log(`# restored panel draws the desktop ${Date.now() - reloadedAt} ms after the reload command`);
    await screenshot(page, 'ui-menus-panel-restored');

    // With its sandbox gone, the restored panel says so (not a blank page).
    const [container] = containersOf(server.workspace);
    sh('docker', ['rm', '-f', container]);
    const goneAt = Date.now();
    await reloadWindow(page);
    const gone = await viewerFrame(page, { inEditor: true, since: goneAt, what: 'the panel restored after the sandbox went' });
    // Gone (the marker's sandbox is missing) or stopped (the old window already cleared it):
    // either way the view's own words and its Start button, not a blank page.
    const state = await waitFor(async () => {
      const { hostState } = await screenStats(gone);
      return ['gone', 'stopped'].find((s) => s === hostState);
    }, 90_000, 200, 'the restored panel to say gone or stopped');
    console.log(`# restored panel after the sandbox went: ${state}: ${await gone.locator('#where').innerText()}`);
    assert.ok((await gone.locator('#where').innerText()).trim().length > 0, 'the panel says where the screen stands');
    assert.equal(await gone.locator('#actions button[data-action="start"]').count(), 1, 'the panel offers Start');
    await screenshot(page, 'ui-menus-panel-restored-gone');
  });
});

test('the "Bot Screen sandbox" terminal profile opens a shell in the sandbox', { timeout: 600_000 }, async () => {
  await withWindow({ 'terminal.integrated.gpuAcceleration': 'off' }, async (server, page) => {
    await runCommand(page, TITLES.start);
    await waitFor(async () => desktopDrawn(await viewerFrame(page, { inEditor: false, what: 'the Screen view' })), 180_000, 300, 'the desktop');
    // The terminal panel open (with a terminal of this machine), as when the user reaches for its
    // + menu; the profile's terminal then becomes the active one.
    await runCommand(page, 'View: Toggle Terminal');
    await page.locator('.part.panel .xterm').first().waitFor({ timeout: 120_000 });
    // VS Code 1.99 lists this command without its "Terminal:" category.
    await runCommand(page, 'Create New Terminal (With Profile)', { timeoutMs: 30_000 });
    const widget = page.locator('.quick-input-widget');
    const labels = async () => (await widget.locator('.quick-input-list .monaco-list-row .label-name').allTextContents()).map((l) => l.trim());
    await waitFor(async () => (await labels()).includes(TERMINAL_PROFILE), 30_000, 200, 'the profile in the list');
    // Picked as a user does from the keyboard: filter to it, Enter.
    await widget.locator('input.input').fill(TERMINAL_PROFILE);
    await waitFor(async () => (await labels())[0] === TERMINAL_PROFILE, 10_000, 200, 'the profile alone at the top');
    await page.keyboard.press('Enter');
    // Its tab carries the sandbox's name ("Bot Screen: botscreen-…").
    await page.locator('.part.panel .terminal-tabs-entry', { hasText: sandboxTerminalName('') }).first().waitFor({ timeout: 120_000 }).catch(async (err) => {
      await screenshot(page, 'ui-menus-terminal-profile-failed');
      throw err;
    });
    const [container] = await waitFor(() => (containersOf(server.workspace).length ? containersOf(server.workspace) : undefined), 60_000, 500, 'the sandbox');
    const probeFile = `/tmp/profile-probe-${Date.now()}`;
    await waitFor(async () => {
      await page.locator('.part.panel .terminal-wrapper.active .xterm').first().click();
      await page.keyboard.type(`echo "$DISPLAY $(id -un)" > ${probeFile}\n`, { delay: 10 });
      await sleep(1500);
      return sh('docker', ['exec', container, 'cat', probeFile]).trim() !== '';
    }, 60_000, 500, 'the shell in the sandbox to write its probe');
    assert.match(sh('docker', ['exec', container, 'cat', probeFile]).trim(), /^:\d+ pn$/);
    await screenshot(page, 'ui-menus-terminal-profile');
  });
});
