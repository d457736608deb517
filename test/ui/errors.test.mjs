// Errors that offer their fix, and a window start that leaves Docker alone, in a real VS Code:
// a recording Docker CLI (named in the user settings; it logs its argv, then runs the real
// docker) proves no docker process runs while a window without a marker opens; the missing-CLI
// error's Open Settings lands on the exact setting; "Allow on this machine" writes the user
// setting only after its modal is accepted.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { SCREEN_FRAME, findWebviewFrame, openWorkbench, runCommand, screenshot, startServer, waitFor } from './harness.mjs';
import { VSIX, containersOf, removeContainersOf, withWindow } from './botscreen.mjs';

// The trust dialog is not what these tests are about: with trust off the extension activates
// without it, however late the dialog would have shown on a loaded machine.
const NO_TRUST_PROMPT = { 'security.workspace.trust.enabled': false };

/** The Bot Screen activation line in the extension host's log, once it is there. */
function activated(server) {
  const logs = path.join(server.userDataDir, 'logs');
  for (const session of fs.existsSync(logs) ? fs.readdirSync(logs) : []) {
    const file = path.join(logs, session, 'exthost1', 'remoteexthost.log');
    const line = fs.existsSync(file) && fs.readFileSync(file, 'utf8').split('\n').find((l) => l.includes('_doActivateExtension botscreen.bot-screen'));
    if (line) return line;
  }
  return undefined;
}

/** A status bar item's accessible label (VS Code puts it on the item or on its inner link). */
function ariaLabel(item) {
  return item.evaluate((el) => el.getAttribute('aria-label') ?? el.querySelector('[aria-label]')?.getAttribute('aria-label') ?? '');
}

/** The error toast holding `text`, and a click on its button labelled `button`. */
async function clickToastButton(page, text, button) {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await toast.waitFor({ state: 'visible', timeout: 60_000 });
  const message = (await toast.locator('.notification-list-item-message').first().innerText()).trim();
  await toast.locator('.monaco-button', { hasText: button }).first().click();
  return message;
}

/** The settings editor is open, filtered to exactly `id`, and lists that one setting. */
async function settingsShowOnly(page, id, title) {
  const search = page.locator('.settings-editor .search-container .view-lines').first();
  const value = await waitFor(async () => {
    const text = ((await search.innerText().catch(() => '')) ?? '').replace(/\u00a0/g, ' ').trim();
    return text.startsWith('@id:') ? text : undefined;
  }, 30_000, 200, 'the settings editor search box');
  assert.equal(value, `@id:${id}`);
  // The CLI path is machine-scoped: in this (served, so remote) window it lives in the Remote tab.
  const count = page.locator('.settings-editor .settings-count-widget').first();
  await waitFor(async () => (await count.innerText().catch(() => '')).trim() === '1 Setting Found', 30_000, 200, 'one setting found');
  assert.match(await page.locator('.settings-editor .settings-tabs-widget .action-label.checked').first().innerText(), /^Remote/);
  assert.match(await page.locator('.settings-editor .settings-body').first().innerText(), new RegExp(title));
}

/** Every settings file the window's user layer may be written to, as text. */
function userSettingsText(server) {
  return ['User', 'Machine']
    .map((dir) => path.join(server.userDataDir, dir, 'settings.json'))
    .filter((file) => fs.existsSync(file))
    .map((file) => fs.readFileSync(file, 'utf8'))
    .join('\n');
}

test('a window in a workspace without a marker runs no docker process; Start does, with a spinner', { timeout: 300_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-errors-docker-'));
  const calls = path.join(dir, 'calls.log');
  const realDocker = execFileSync('sh', ['-c', 'command -v docker'], { encoding: 'utf8' }).trim();
  const recorder = path.join(dir, 'docker');
  fs.writeFileSync(recorder, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\nexec '${realDocker}' "$@"\n`, { mode: 0o755 });
  const server = await startServer({ vsixPath: VSIX, userSettings: { ...NO_TRUST_PROMPT, 'botScreen.sandbox.docker.path': recorder } });
  let workbench;
  try {
    workbench = await openWorkbench(server);
    const { page } = workbench;
    const line = await waitFor(() => activated(server), 90_000, 250, 'Bot Screen to activate');
    console.log(`# ${line.replace(/^.*_doActivateExtension /, 'activated: ')}`);
    // Idle for a while after activation: a background attach or image check would show here.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    assert.equal(fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8') : '', '', 'no docker call while the window opened');
    assert.equal(await page.locator('.statusbar-item', { hasText: 'Screen:' }).count(), 0, 'no indicator in a window where no screen ran (auto)');

    // The recorder does record: Start calls docker, and the indicator appears with a spinner.
    let spinnerSeen = false;
    const item = page.locator('.statusbar-item', { hasText: 'Screen:' }).first();
    await runCommand(page, 'Bot Screen: Start Screen');
    // Whether the start itself succeeds on a loaded machine is the other UI tests' business:
    // here it must call docker and show the spinner until it ends.
    const label = await waitFor(async () => {
      spinnerSeen ||= (await item.locator('.codicon-loading').count().catch(() => 0)) > 0;
      const text = await ariaLabel(item).catch(() => '');
      return /: (running|error|blocked)/.test(text) ? text : undefined;
    }, 120_000, 50, 'the start to end');
    console.log(`# indicator label after the start: ${label}`);
    assert.ok(spinnerSeen, 'a spinner while the screen started');
    assert.equal(await item.locator('.codicon-loading').count(), 0, 'no spinner once the start ended');
    assert.match(label, /^Bot Screen, docker sandbox: /);
    assert.match(fs.readFileSync(calls, 'utf8'), /^version /m, 'the recorder saw the start');
    if (label.includes('running')) {
      assert.match(label, /the agent has control/);
      await runCommand(page, 'Bot Screen: Stop Screen');
      await waitFor(async () => /stopped/.test(await ariaLabel(item)), 30_000, 200, 'the indicator to say stopped');
    }
  } catch (err) {
    if (workbench) await screenshot(workbench.page, 'errors-no-docker-failure').catch(() => {});
    throw err;
  } finally {
    await workbench?.close();
    await server.stop();
    removeContainersOf(server.workspace);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a missing Docker CLI: the error names the setting and Open Settings lands on it', { timeout: 240_000 }, async () => {
  const missing = path.join(os.tmpdir(), `botscreen-errors-no-docker-${process.pid}`, 'docker');
  await withWindow({ ...NO_TRUST_PROMPT, 'botScreen.sandbox.docker.path': missing }, async (server, page) => {
    await runCommand(page, 'Bot Screen: Start Screen');
    const message = await clickToastButton(page, 'was not found', 'Open Settings');
    console.log(`# error: ${message}`);
    assert.match(message, /botScreen\.sandbox\.docker\.path/);
    assert.doesNotMatch(message, /<backend>/);
    await settingsShowOnly(page, 'botScreen.sandbox.docker.path', 'Docker: Path');
    await screenshot(page, 'errors-open-settings');

    // The Screen view offers the same fixes; its Open Settings lands on the setting too.
    const frame = await findWebviewFrame(page, SCREEN_FRAME, 60_000);
    const actions = await frame.evaluate(() => [...document.querySelectorAll('#actions button')].map((b) => b.dataset.action));
    console.log(`# view actions: ${actions.join(', ')}`);
    assert.deepEqual(actions.slice(0, 4), ['openSettings', 'installDocker', 'start', 'showLogs']);
    await runCommand(page, 'View: Close All Editors');
    await page.locator('.settings-editor').first().waitFor({ state: 'hidden', timeout: 15_000 });
    await frame.locator('#actions button[data-action="openSettings"]').click();
    await settingsShowOnly(page, 'botScreen.sandbox.docker.path', 'Docker: Path');
    assert.deepEqual(containersOf(server.workspace), [], 'nothing was created');
  });
});

test('"Allow on this machine" writes botScreen.placement to the user settings only after the modal is accepted', { timeout: 240_000 }, async () => {
  await withWindow({ ...NO_TRUST_PROMPT, 'botScreen.sandbox.backend': 'modal' }, async (server, page) => {
    const before = userSettingsText(server);
    assert.doesNotMatch(before, /botScreen\.placement/);

    // Declined: the modal explains, Cancel writes nothing.
    await runCommand(page, 'Bot Screen: Start Screen');
    const refusal = await clickToastButton(page, 'cannot host a screen', 'Allow on this machine');
    console.log(`# refusal: ${refusal}`);
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    console.log(`# modal: ${(await dialog.innerText()).replace(/\s+/g, ' ')}`);
    assert.match(await dialog.innerText(), /outside the sandbox/);
    assert.equal(userSettingsText(server), before, 'nothing written while the modal is open');
    await dialog.locator('.monaco-button', { hasText: 'Cancel' }).first().click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(userSettingsText(server), before, 'Cancel wrote nothing');

    // Accepted: the user settings now hold the opt-in.
    await runCommand(page, 'Bot Screen: Start Screen');
    await clickToastButton(page, 'cannot host a screen', 'Allow on this machine');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    await dialog.locator('.monaco-button', { hasText: /^Allow$/ }).first().click();
    const written = await waitFor(() => {
      const file = path.join(server.userDataDir, 'User', 'settings.json');
      const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
      return settings['botScreen.placement'] === 'gateway' ? settings : undefined;
    }, 15_000, 200, 'botScreen.placement in User/settings.json');
    assert.equal(written['botScreen.sandbox.backend'], 'modal', 'the rest of the user settings kept');
    const info = page.locator('.notifications-toasts .notification-toast', { hasText: 'The screen may now run' }).first();
    await info.waitFor({ state: 'visible', timeout: 15_000 });
    console.log(`# after: ${(await info.innerText()).replace(/\s+/g, ' ')}`);
    await screenshot(page, 'errors-allow-host');
  });
});
