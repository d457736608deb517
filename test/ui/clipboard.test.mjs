// The clipboard between VS Code and the sandbox's screen, in a real VS Code (the browser's
// clipboard is what vscode.env.clipboard reads and writes in a served window) against the real
// desktop image (xclip inside the sandbox reads and sets the screen's CLIPBOARD): text moves both
// ways only while this view holds control, UTF-8 intact, and 300 KiB is refused with a message.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { canvasColorCount, runCommand, screenshot, sh, sleep, waitFor } from './harness.mjs';
import { TITLES, containersOf, l10nText, screenFrame, screenStats, withWindow } from './botscreen.mjs';

/** `-e` arguments for the screen's X display, as the launcher wrote them. */
function displayEnv(container) {
  return sh('docker', ['exec', '-u', 'pn', container, 'sh', '-c', 'cat /tmp/botscreen-1000/*/env'])
    .split('\n').filter((line) => /^(DISPLAY|XAUTHORITY|DBUS_SESSION_BUS_ADDRESS)=/.test(line))
    .flatMap((v) => ['-e', v]);
}

const KIB300 = 300 * 1024;

/** The screen's clipboard, driven with xclip inside the sandbox as the desktop user. */
function screenClipboardOf(container) {
  const env = displayEnv(container);
  const inSandbox = (script, ...args) => sh('docker', ['exec', '-u', 'pn', ...env, container, 'sh', '-c', script, 'sh', ...args]);
  return {
    env,
    /** What an X program there pastes ('' when nobody offers text). */
    read: () => inSandbox('timeout 10 xclip -o -selection clipboard 2>/dev/null'),
    /** Copies there: xclip owns the CLIPBOARD (it stays in the background until someone else takes it). */
    copy: (text) => inSandbox('printf %s "$1" | xclip -selection clipboard >/dev/null 2>&1', text),
    copyBig: (bytes, char) => inSandbox('head -c "$1" /dev/zero | tr "\\0" "$2" | xclip -selection clipboard >/dev/null 2>&1', String(bytes), char),
  };
}

/** The window's clipboard (what vscode.env.clipboard reads and writes in a served VS Code). */
async function browserClipboard(page) {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
  return {
    set: (text) => page.evaluate((t) => navigator.clipboard.writeText(t), text),
    get: () => page.evaluate(() => navigator.clipboard.readText()),
  };
}

test('the clipboard moves both ways only while this view holds control, in UTF-8, at most 256 KiB', { timeout: 900_000 }, async () => {
  await withWindow({}, async (server, page) => {
    const browser = await browserClipboard(page);
    const setVsClipboard = browser.set;
    const vsClipboard = browser.get;

    await runCommand(page, TITLES.start);
    const frame = await screenFrame(page, 120_000);
    await waitFor(async () => (await canvasColorCount(frame, { minWidth: 1280 })).colors >= 10, 180_000, 200, 'the desktop'); // generous: a loaded machine
    const [container] = containersOf(server.workspace);
    const { env, read: screenClipboard, copy: copyOnScreen, copyBig: copyBigOnScreen } = screenClipboardOf(container);
    const canvas = frame.locator('#screen canvas').first();
    const clipboardButton = frame.locator('#clipboard');
    const toast = (text) => page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();

    // The agent holds control: nothing moves either way, and the view shows no sharing.
    await setVsClipboard('typed in VS Code while the agent acts');
    await canvas.click(); // focus: the view asks the host to offer the clipboard, and the gate says no
    await sleep(3_000);
    assert.equal(screenClipboard(), '', 'the VS Code clipboard reached the screen with the agent in control');
    copyOnScreen('copied by the agent');
    await sleep(3_000);
    assert.equal(await vsClipboard(), 'typed in VS Code while the agent acts', 'the agent\'s copy reached the VS Code clipboard');
    assert.equal(await clipboardButton.isHidden(), true, 'no "clipboard shared" without control');

    // Take control: the VS Code clipboard is offered to the screen at once, and the view says it is shared.
    await frame.locator('#control-button').click();
    await waitFor(async () => (await screenStats(frame)).inControl, 10_000, 100, 'this view to hold control');
    await clipboardButton.waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal((await clipboardButton.textContent()).trim(), l10nText('Clipboard shared'));
    await waitFor(() => screenClipboard() === 'typed in VS Code while the agent acts', 20_000, 300, 'the VS Code clipboard on the screen after Take control');

    // VS Code → screen in UTF-8, pasted into a terminal there with Ctrl+Shift+V.
    const toScreen = 'héllo 日本 → screen';
    await setVsClipboard(toScreen);
    await clipboardButton.click(); // the paste action
    await waitFor(() => screenClipboard() === toScreen, 20_000, 300, 'the UTF-8 text in the screen\'s clipboard');
    spawn('docker', ['exec', '-u', 'pn', ...env, container, 'xfce4-terminal', '--disable-server', '--maximize', '--working-directory=/tmp'], { stdio: 'ignore' });
    await waitFor(() => sh('docker', ['exec', container, 'pgrep', '-f', 'xfce4-terminal']).trim() !== '', 15_000, 200, 'the terminal');
    await sleep(2_500); // the window maps and takes the focus
    await canvas.click();
    await page.keyboard.type('cat > pasted\n', { delay: 20 });
    await sleep(500);
    await page.keyboard.press('Control+Shift+V');
    await sleep(500);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+D');
    await waitFor(() => sh('docker', ['exec', container, 'cat', '/tmp/pasted']) === `${toScreen}\n`, 20_000, 300, 'the pasted text in the terminal\'s file');

    // screen → VS Code in UTF-8.
    const fromScreen = 'héllo 日本 ← screen';
    copyOnScreen(fromScreen);
    await waitFor(async () => (await vsClipboard()) === fromScreen, 20_000, 300, 'the screen\'s copy in the VS Code clipboard');

    // 300 KiB each way: refused with a message, nothing cut, nothing replaced.
    const bigVs = 'x'.repeat(KIB300);
    await setVsClipboard(bigVs);
    await clipboardButton.click();
    const refusedToScreen = toast(l10nText('The VS Code clipboard holds {0} KiB of text, more than the {1} KiB the screen takes: it was not sent to the screen.').replace('{0}', '300').replace('{1}', '256'));
    await refusedToScreen.waitFor({ timeout: 20_000 });
    assert.equal(screenClipboard(), fromScreen, 'the screen\'s clipboard kept what it had');
    await screenshot(page, 'ui-clipboard-refused');
    copyBigOnScreen(KIB300, 'y');
    await toast(l10nText('The text copied on the screen is {0} KiB, more than the {1} KiB the clipboard takes: the VS Code clipboard was left as it was.').replace('{0}', '300').replace('{1}', '256'))
      .waitFor({ timeout: 20_000 });
    await sleep(1_000);
    assert.equal((await vsClipboard()).length, KIB300);
    assert.equal(await vsClipboard(), bigVs, 'the VS Code clipboard kept what it had');

    // Hand back: what this view shared is withdrawn from the screen, and nothing moves any more.
    await setVsClipboard('shared only while in control');
    await clipboardButton.click();
    await waitFor(() => screenClipboard() === 'shared only while in control', 20_000, 300, 'the text on the screen');
    await frame.locator('#control-button').click();
    await waitFor(async () => !(await screenStats(frame)).inControl, 10_000, 100, 'control back to the agent');
    await clipboardButton.waitFor({ state: 'hidden', timeout: 10_000 });
    await waitFor(() => screenClipboard() === '', 10_000, 300, 'the shared text withdrawn from the screen');
    copyOnScreen('copied by the agent again');
    await setVsClipboard('typed in VS Code after hand back');
    await canvas.click();
    await sleep(3_000);
    assert.equal(screenClipboard(), 'copied by the agent again', 'the VS Code clipboard reached the screen after hand back');
    assert.equal(await vsClipboard(), 'typed in VS Code after hand back', 'the agent\'s copy reached the VS Code clipboard after hand back');
  }, { failureShot: 'ui-clipboard-failure' });
});

test('botScreen.clipboard is the user\'s: "off" shares nothing under control, and a workspace "both" cannot turn it on', { timeout: 600_000 }, async () => {
  await withWindow({ 'botScreen.clipboard': 'off' }, async (server, page) => {
    const browser = await browserClipboard(page);
    await runCommand(page, TITLES.start);
    const frame = await screenFrame(page, 120_000);
    await waitFor(async () => (await canvasColorCount(frame, { minWidth: 1280 })).colors >= 10, 180_000, 200, 'the desktop'); // generous: a loaded machine
    const screen = screenClipboardOf(containersOf(server.workspace)[0]);
    await browser.set('typed in VS Code, sharing off');
    await frame.locator('#control-button').click();
    await waitFor(async () => (await screenStats(frame)).inControl, 10_000, 100, 'this view to hold control');
    await frame.locator('#screen canvas').first().click();
    screen.copy('copied on the screen, sharing off');
    await sleep(4_000);
    assert.equal(await frame.locator('#clipboard').isHidden(), true, 'no "clipboard shared" with sharing off');
    assert.equal(screen.read(), 'copied on the screen, sharing off', 'the VS Code clipboard reached the screen');
    assert.equal(await browser.get(), 'typed in VS Code, sharing off', 'the screen\'s copy reached the VS Code clipboard');
  }, {
    // The workspace (a cloned repository, or the agent) asks for sharing both ways.
    beforeOpen: (server) => {
      fs.mkdirSync(path.join(server.workspace, '.vscode'), { recursive: true });
      fs.writeFileSync(path.join(server.workspace, '.vscode', 'settings.json'), JSON.stringify({ 'botScreen.clipboard': 'both' }));
    },
    failureShot: 'ui-clipboard-off-failure',
  });
});
