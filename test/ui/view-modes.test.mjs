// The Screen view's modes and keys in a real VS Code with the real sandbox desktop: Fit, 1:1 and
// Resize, picked from the view's title toolbar ("View Mode") and from the view's own buttons,
// which show the toolbar's pick, draw the screen at the size each promises (canvas against the
// screen and the view), and so does 1:1 picked in the editor panel's title toolbar;
// Resize under control changes the X screen's size inside the sandbox (xdpyinfo), never without
// control, and hand back restores the started geometry. The Send keys menu presses real chords
// only with control, and a German keyboard's z, ü and AltGr+Q (@) arrive in a terminal on the
// screen as typed (Chromium types US by default: the German key events go in through CDP).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { canvasColorCount, REPO_ROOT, runCommand, screenshot, sh, sleep, waitFor } from './harness.mjs';
import { TITLES, commandLabel, containersOf, screenFrame, screenStats, screenViewActions, withWindow } from './botscreen.mjs';

const WIDTH = 1280;
const HEIGHT = 800;

/** The screen's size as the X server inside the sandbox reports it. */
function xdpyinfoSize(container) {
  const out = sh('docker', ['exec', '-u', 'pn', container, 'sh', '-c', 'env $(grep -E "^(DISPLAY|XAUTHORITY)=" /tmp/botscreen-1000/*/env) xdpyinfo']);
  const match = /dimensions:\s+(\d+)x(\d+) pixels/.exec(out);
  assert.ok(match, `xdpyinfo printed no dimensions:\n${out.slice(0, 500)}`);
  return { width: Number(match[1]), height: Number(match[2]) };
}

function sessionEnv(container) {
  return sh('docker', ['exec', '-u', 'pn', container, 'sh', '-c', 'cat /tmp/botscreen-1000/*/env'])
    .split('\n').filter((line) => /^(DISPLAY|XAUTHORITY|DBUS_SESSION_BUS_ADDRESS)=/.test(line));
}

/** What the view draws: the canvas's pixels (the screen's), its size on the page, and the view's. */
function drawn(frame) {
  return frame.evaluate(() => {
    const canvas = document.querySelector('#screen canvas');
    const box = document.querySelector('#screen > div');
    const c = canvas.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    return {
      mode: document.querySelector('#screen').dataset.viewMode,
      pixels: { width: canvas.width, height: canvas.height },
      shown: { width: c.width, height: c.height },
      view: { width: b.width, height: b.height },
      page: document.documentElement.clientWidth,
      scrolls: box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight,
    };
  });
}

const near = (a, b, tolerance = 1) => Math.abs(a - b) <= tolerance;

/**
 * Picks a view mode from a title toolbar's "View Mode" button, as a person would: the button
 * (the side bar's Screen view, or the active editor group's, where the panel is), then the item.
 */
async function pickFromToolbar(page, where, id) {
  const bar = where === 'view' ? await screenViewActions(page) : page.locator('.part.editor .editor-group-container.active .editor-actions');
  await bar.locator('.action-label.codicon-screen-full').first().click();
  const menu = page.locator('.monaco-menu-container .monaco-menu .actions-container').first();
  await menu.waitFor({ timeout: 10_000 });
  const items = (await menu.locator('.action-item .action-label:not(.separator)').allTextContents()).map((l) => l.trim()).filter(Boolean);
  assert.deepEqual(items, ['viewModeFit', 'viewModeActual', 'viewModeResize'].map((c) => commandLabel(c)), 'the View Mode menu lists the three modes');
  // The pointer picks the item (VS Code's menu takes no click that comes as fast as Playwright's
  // right after it opened), Enter runs it.
  const item = menu.locator('.action-item', { has: page.locator('.action-label', { hasText: commandLabel(id) }) }).first();
  await item.hover();
  await sleep(300);
  await page.keyboard.press('Enter');
  await menu.waitFor({ state: 'hidden', timeout: 10_000 });
}

/**
 * Starts the screen and waits for its desktop. On a machine loaded by other test runs the
 * launcher can time out; then the view's Start (its Retry) is pressed once more, as a person
 * would: what these tests check comes after the start.
 */
async function startDesktop(page) {
  await runCommand(page, TITLES.start);
  const frame = await screenFrame(page, 60_000);
  const state = await waitFor(async () => { const s = (await screenStats(frame))?.hostState; return s === 'running' || s === 'error' ? s : undefined; }, 120_000, 250, 'the screen to start');
  if (state === 'error') {
    console.log(`# the first start failed (${await frame.locator('#detail').textContent()}); starting again`);
    await frame.locator('#actions [data-action="start"]').click();
    await waitFor(async () => (await screenStats(frame)).hostState === 'running', 120_000, 250, 'the screen to start again');
  }
  await waitFor(async () => (await canvasColorCount(frame, { minWidth: WIDTH })).colors >= 10, 60_000, 200, 'the desktop');
  return frame;
}

test('Fit, 1:1 and Resize draw at their size; Resize changes the screen only with control; hand back restores it', { timeout: 540_000 }, async () => {
  await withWindow({ 'botScreen.screen.geometry': `${WIDTH}x${HEIGHT}` }, async (server, page) => {
    const frame = await startDesktop(page);
    const [container] = containersOf(server.workspace);
    assert.deepEqual(xdpyinfoSize(container), { width: WIDTH, height: HEIGHT });
    const mode = (name) => frame.locator(`.view-mode[data-mode="${name}"]`);

    // Fit (the default): the whole screen, scaled into the view, aspect kept, no scrollbars.
    let d = await drawn(frame);
    assert.equal(d.mode, 'fit');
    assert.deepEqual(d.pixels, { width: WIDTH, height: HEIGHT });
    assert.ok(d.view.width < WIDTH, `the side bar view (${d.view.width} px) is narrower than the screen, so Fit scales`);
    assert.ok(near(d.view.width, d.page), `the view spans the webview's width, not the canvas's: ${JSON.stringify(d)}`);
    assert.ok(near(d.shown.width, d.view.width) || near(d.shown.height, d.view.height), `Fit fills one side: ${JSON.stringify(d)}`);
    assert.ok(d.shown.width <= d.view.width + 1 && d.shown.height <= d.view.height + 1, `Fit shows the whole screen inside the view: ${JSON.stringify(d)}`);
    assert.ok(near(d.shown.width / d.shown.height, WIDTH / HEIGHT, 0.01), `Fit keeps the aspect: ${JSON.stringify(d)}`);
    assert.equal(d.scrolls, false);
    assert.equal(await mode('fit').getAttribute('aria-pressed'), 'true');

    // 1:1 from the title toolbar: one screen pixel per CSS pixel, with scrollbars in a view
    // smaller than the screen; the view's own buttons show the pick.
    await pickFromToolbar(page, 'view', 'viewModeActual');
    await waitFor(async () => (await drawn(frame)).mode === 'actual', 5_000, 100, '1:1');
    assert.equal(await mode('actual').getAttribute('aria-pressed'), 'true', 'the view\'s 1:1 button shows the toolbar\'s pick');
    assert.equal(await mode('fit').getAttribute('aria-pressed'), 'false');
    d = await waitFor(async () => { const x = await drawn(frame); return near(x.shown.width, WIDTH) ? x : undefined; }, 5_000, 100, 'the canvas at 1:1');
    assert.ok(near(d.shown.height, HEIGHT), JSON.stringify(d));
    assert.equal(d.scrolls, true, 'scrollbars reach the rest of the screen');
    await screenshot(page, 'ui-view-mode-actual');

    // Fit from the view's own button, then Resize from the toolbar.
    await mode('fit').click();
    d = await waitFor(async () => { const x = await drawn(frame); return x.mode === 'fit' && x.shown.width < WIDTH ? x : undefined; }, 5_000, 100, 'Fit again');
    assert.ok(near(d.shown.width, d.view.width) || near(d.shown.height, d.view.height), `Fit fills one side: ${JSON.stringify(d)}`);
    assert.ok(d.shown.width <= d.view.width + 1 && d.shown.height <= d.view.height + 1, `Fit shows the whole screen inside the view: ${JSON.stringify(d)}`);

    // Resize without control: nothing reaches the screen, the view fits.
    await pickFromToolbar(page, 'view', 'viewModeResize');
    await waitFor(async () => (await drawn(frame)).mode === 'fit', 5_000, 100, 'Resize without control to fit');
    await sleep(1_500);
    assert.deepEqual(xdpyinfoSize(container), { width: WIDTH, height: HEIGHT }, 'no resize without control');
    assert.equal(await mode('resize').getAttribute('aria-pressed'), 'true');

    // Take control: the screen takes the view's size, drawn 1:1.
    await frame.locator('#control-button').click();
    await waitFor(async () => (await screenStats(frame)).inControl, 10_000, 100, 'this view to hold control');
    // The view's size is read with each look: taking control changes the control bar (the
    // clipboard and Send keys controls), so the view settles a moment after the take-over.
    let want;
    let seen;
    await waitFor(async () => {
      const view = (await drawn(frame)).view;
      want = { width: Math.floor(view.width), height: Math.floor(view.height) };
      seen = xdpyinfoSize(container);
      return seen.width === want.width && seen.height === want.height;
    }, 20_000, 250, 'the sandbox\'s X screen to become the view\'s size').catch((err) => {
      throw new Error(`${err.message}: the view is ${want.width}x${want.height}, the X screen ${seen.width}x${seen.height}`);
    });
    d = await waitFor(async () => { const x = await drawn(frame); return x.pixels.width === want.width ? x : undefined; }, 10_000, 100, 'the canvas at the new size');
    assert.deepEqual(d.pixels, want);
    assert.ok(near(d.shown.width, want.width) && near(d.shown.height, want.height), `drawn 1:1 once resized: ${JSON.stringify(d)}`);
    assert.equal(d.scrolls, false);
    console.log(`# resized to the view: ${want.width}x${want.height}`);
    await screenshot(page, 'ui-view-mode-resized');

    // Hand back: the screen returns to the started geometry, and the view fits it again.
    await frame.locator('#control-button').click();
    await waitFor(async () => !(await screenStats(frame)).inControl, 10_000, 100, 'control to go back to the agent');
    await waitFor(() => { const s = xdpyinfoSize(container); return s.width === WIDTH && s.height === HEIGHT; }, 20_000, 250, 'the screen to return to 1280x800');
    d = await waitFor(async () => { const x = await drawn(frame); return x.pixels.width === WIDTH ? x : undefined; }, 10_000, 100, 'the canvas back at 1280x800');
    assert.equal(d.mode, 'fit');
    assert.deepEqual(d.pixels, { width: WIDTH, height: HEIGHT });

    // The editor panel's title toolbar: 1:1 there draws the panel's canvas 1:1 (the side bar's
    // view keeps its own mode).
    await runCommand(page, TITLES.openInEditor);
    const panel = await waitFor(async () => {
      for (const f of page.frames()) {
        if (f === frame || f.isDetached()) continue;
        const live = await screenStats(f).then((s) => s?.connection === 'live').catch(() => false);
        if (live && (await canvasColorCount(f, { minWidth: WIDTH }).catch(() => ({ colors: 0 }))).colors >= 10) return f;
      }
      return undefined;
    }, 60_000, 250, 'the editor panel drawing the desktop');
    assert.equal((await drawn(panel)).mode, 'fit');
    await pickFromToolbar(page, 'panel', 'panelViewModeActual');
    d = await waitFor(async () => { const x = await drawn(panel); return x.mode === 'actual' && near(x.shown.width, WIDTH) ? x : undefined; }, 5_000, 100, 'the panel at 1:1');
    assert.ok(near(d.shown.height, HEIGHT), JSON.stringify(d));
    assert.equal(await panel.locator('.view-mode[data-mode="actual"]').getAttribute('aria-pressed'), 'true');
    assert.equal(await mode('resize').getAttribute('aria-pressed'), 'true', 'the side bar\'s view keeps its own mode');
    await screenshot(page, 'ui-view-mode-panel-actual');
  }, { failureShot: 'ui-view-modes-failed' });
});

/** Puts test/support/keylog.py (a plain X client that logs each key press it gets) into the sandbox. */
function installKeylog(container) {
  execFileSync('docker', ['exec', '-i', '-u', 'pn', container, 'sh', '-c', 'cat > /tmp/keylog.py'], { input: fs.readFileSync(path.join(REPO_ROOT, 'test/support/keylog.py')) });
}

/** A German keyboard's key events as Chromium would make them (key, code, text, Windows key code). */
const GERMAN = [
  { key: 'z', code: 'KeyY', text: 'z', windowsVirtualKeyCode: 90 },
  { key: 'ü', code: 'BracketLeft', text: 'ü', windowsVirtualKeyCode: 186 },
  { altGr: true, key: '@', code: 'KeyQ', text: '@', windowsVirtualKeyCode: 81 },
];

async function typeGerman(cdp) {
  const send = (params) => cdp.send('Input.dispatchKeyEvent', params);
  for (const { altGr, ...k } of GERMAN) {
    if (altGr) await send({ type: 'rawKeyDown', key: 'AltGraph', code: 'AltRight', windowsVirtualKeyCode: 225 });
    await send({ type: 'keyDown', ...k });
    await send({ type: 'keyUp', key: k.key, code: k.code, windowsVirtualKeyCode: k.windowsVirtualKeyCode });
    if (altGr) await send({ type: 'keyUp', key: 'AltGraph', code: 'AltRight', windowsVirtualKeyCode: 225 });
    await sleep(50);
  }
  await send({ type: 'keyDown', key: 'Enter', code: 'Enter', text: '\r', windowsVirtualKeyCode: 13 });
  await send({ type: 'keyUp', key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13 });
}

test('Send keys presses real chords only with control; a German z, ü and AltGr @ arrive as typed', { timeout: 540_000 }, async () => {
  await withWindow({ 'terminal.integrated.gpuAcceleration': 'off' }, async (server, page) => {
    const frame = await startDesktop(page);
    const [container] = containersOf(server.workspace);
    const env = sessionEnv(container);
    const fileIn = (file) => sh('docker', ['exec', container, 'sh', '-c', 'cat "$1" 2>/dev/null || true', 'sh', file]);
    const canvas = frame.locator('#screen canvas').first();
    const sendKeys = frame.locator('#send-keys');

    // Without control the menu is offered but disabled.
    assert.equal(await sendKeys.isDisabled(), true, 'Send keys is disabled without control');

    // A key logger window with the focus, then control.
    const log = '/tmp/keys-sent.log';
    installKeylog(container);
    const onScreen = (...argv) => ['exec', '-u', 'pn', ...env.flatMap((v) => ['-e', v]), container, ...argv];
    spawn('docker', onScreen('python3', '/tmp/keylog.py', 'keys-sent', log), { stdio: 'ignore' });
    await waitFor(() => sh('docker', onScreen('xdotool', 'search', '--name', '^keys-sent$')).trim(), 15_000, 200, 'the key logger window');
    await sleep(1_500); // mapped and focused
    await frame.locator('#control-button').click();
    await waitFor(async () => (await screenStats(frame)).inControl, 10_000, 100, 'this view to hold control');
    assert.equal(await sendKeys.isDisabled(), false);
    // Send keys needs no focus in the view; the key logger gets the screen's keyboard focus.
    sh('docker', onScreen('xdotool', 'search', '--name', '^keys-sent$', 'windowactivate', 'windowraise', 'windowfocus'));
    await sleep(500);

    // Not Print here: Xfce binds it for the whole desktop (its screenshot tool), so no window sees it.
    for (const chord of ['F5', 'Ctrl+T', 'F12', 'Ctrl+W']) {
      await sendKeys.click();
      await frame.locator(`#send-keys-menu [data-chord="${chord}"]`).click();
      await sleep(300);
    }
    const lines = await waitFor(() => { const text = fileIn(log).trim(); return text.split('\n').length >= 4 ? text.split('\n') : undefined; }, 10_000, 200, 'the chords in the key log');
    const pressed = lines.map((line) => { const [, name, state] = line.split(' '); return `${name}/${Number(state) & 4 ? 'ctrl' : ''}`; });
    console.log(`# key log: ${pressed.join(' ')}`);
    assert.deepEqual(pressed.filter((p) => !/^(Control_L|Alt_L)\//.test(p)), ['F5/', 't/ctrl', 'F12/', 'w/ctrl']);
    // Released too: no key and no button stays down on the screen.
    const state = sh('docker', onScreen('python3', '/tmp/keylog.py', '--state')).trim();
    assert.match(state, /^\d+ ?$/, `keys still down after the chords: ${state}`);

    // A terminal on the screen that writes what it gets; a German keyboard types into it.
    const typed = '/tmp/typed-de';
    spawn('docker', onScreen('env', 'LANG=C.UTF-8', 'xfce4-terminal', '--disable-server', '--maximize', '-x', 'sh', '-c', `cat > ${typed}`), { stdio: 'ignore' });
    await waitFor(() => sh('docker', ['exec', container, 'sh', '-c', `test -e ${typed} && echo yes || true`]).trim() === 'yes', 15_000, 200, 'the terminal');
    await sleep(2_000); // mapped and focused
    await canvas.click(); // its centre: inside the maximised terminal, and the view's keyboard goes to the screen
    const cdp = await page.context().newCDPSession(page);
    await typeGerman(cdp);
    const got = await waitFor(() => { const text = fileIn(typed); return text.includes('\n') ? text : undefined; }, 10_000, 200, 'the typed line in the terminal');
    assert.equal(got, 'zü@\n', `typed on a German keyboard: ${JSON.stringify(got)}`);

    // Hand back: the menu is disabled again.
    await frame.locator('#control-button').click();
    await waitFor(async () => !(await screenStats(frame)).inControl, 10_000, 100, 'control to go back to the agent');
    assert.equal(await sendKeys.isDisabled(), true);
  }, { failureShot: 'ui-send-keys-failed' });
});
