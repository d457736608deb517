// What the UI tests know about Bot Screen itself, taken from the product rather than re-typed:
// its command titles and labels (package.json, package.nls*.json, l10n/), the key it gives a
// workspace (src/core/workspaceKey.ts, which names its container and runtime dir), its sandbox
// containers, the window every UI test opens with it installed, and the one reader of the Screen
// webview's counters (its connection panel's data-* attributes). How to drive VS Code in general
// is in test/ui/harness.mjs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  REPO_ROOT, canvasColorCount, findWebviewFrame, importTs, openWorkbench, runCommand, screenshot, sh, startServer, waitFor,
} from './harness.mjs';

export { hostProcesses } from './harness.mjs';

export const VSIX = process.env.BOTSCREEN_VSIX || path.join(REPO_ROOT, 'bot-screen.vsix');

// ---------------------------------------------------------------------------
// Labels, from the files VS Code itself reads them from.

const readJson = (file) => JSON.parse(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'));
const manifest = readJson('package.json');
const localized = new Map();
/** A file of strings in English (no locale) or in `locale`; a missing key is an error, never a fallback. */
function strings(file, locale) {
  if (!localized.has(file)) localized.set(file, readJson(file));
  const table = localized.get(file);
  return (key) => {
    if (typeof table[key] !== 'string') throw new Error(`${file} has no string "${key}"${locale ? ` (locale ${locale})` : ''}`);
    return table[key];
  };
}
const nls = (locale) => strings(locale ? `package.nls.${locale}.json` : 'package.nls.json', locale);
/** A manifest value: "%key%" resolved through package.nls[.locale].json, anything else as is. */
const resolve = (value, locale) => (/^%.+%$/.test(value) ? nls(locale)(value.slice(1, -1)) : value);

/** A string the extension shows through vscode.l10n.t(key), as l10n/ bundles it for `locale`. */
export function l10nText(key, locale) {
  return strings(locale ? `l10n/bundle.l10n.${locale}.json` : 'l10n/bundle.l10n.json', locale)(key);
}

function command(id) {
  const found = manifest.contributes.commands.find((c) => c.command === `botScreen.${id}`);
  if (!found) throw new Error(`package.json contributes no command botScreen.${id}`);
  return found;
}
/** A command's title without its category, as menus and title buttons show it ("Start Screen"). */
export const commandLabel = (id, locale) => resolve(command(id).title, locale);
/** A command's title as the palette lists it ("Bot Screen: Start Screen"); `id` without "botScreen.". */
export const commandTitle = (id, locale) => `${resolve(command(id).category, locale)}: ${commandLabel(id, locale)}`;

/** The palette titles of Bot Screen's commands, by id without "botScreen." (TITLES.start, ...). */
export const TITLES = Object.fromEntries(manifest.contributes.commands
  .map((c) => c.command.replace(/^botScreen\./, ''))
  .map((id) => [id, commandTitle(id)]));

/** The terminal profile's name ("Bot Screen sandbox"). */
export const TERMINAL_PROFILE = resolve(manifest.contributes.terminal.profiles.find((p) => p.id === 'botScreen.sandbox').title);
/** The activity bar entry's name. */
export const VIEW_CONTAINER = resolve(manifest.contributes.viewsContainers.activitybar.find((c) => c.id === 'botScreen').title);
/** The name of a sandbox terminal's tab ("Bot Screen: botscreen-…") for a sandbox named `name`. */
export const sandboxTerminalName = (name) => l10nText('Bot Screen: {0}').replace('{0}', name);
/** The editor panel's tab title. */
export const PANEL_TITLE = l10nText('Bot Screen');
/** The placement indicator's text before its place ("Screen:"), in English or in `locale`. */
export const indicatorPrefix = (locale) => l10nText('Screen: {0}', locale).replace('{0}', '').trim();
/** The indicator's text for a screen in a `backend` sandbox ("Screen: docker sandbox"). */
export const indicatorText = (backend, locale) => l10nText('Screen: {0}', locale).replace('{0}', l10nText('{0} sandbox', locale).replace('{0}', backend));

/** The placement indicator in the status bar: it shows once Bot Screen is active. */
export function indicator(page, locale) {
  return page.locator('.statusbar-item', { hasText: indicatorPrefix(locale) }).first();
}

// ---------------------------------------------------------------------------
// The workspace key and the sandbox containers.

const { workspaceKeyOf } = await importTs('src/core/workspaceKey.ts');

/** The key Bot Screen gives a folder opened in the VS Code Server (src/core/workspaceKey.ts). */
export function workspaceKey(folder) {
  return workspaceKeyOf(pathToFileURL(folder).href);
}

/** Ids of the sandbox containers Bot Screen made for this workspace. */
export function containersOf(folder) {
  return sh('docker', ['ps', '-aq', '--no-trunc', '--filter', `label=dev.botscreen.workspace=${workspaceKey(folder)}`])
    .split('\n').filter(Boolean);
}

/** Removes only this workspace's containers: provably ours (labels) and throwaway (temp workspace). */
export function removeContainersOf(folder) {
  const ids = containersOf(folder);
  if (ids.length > 0) sh('docker', ['rm', '-f', ...ids]);
}

// ---------------------------------------------------------------------------
// The window.

/**
 * A VS Code window with Bot Screen installed and active (its placement indicator shows, so its
 * commands are in the palette); runs `body(server, page)`, then ends the window and the server
 * and removes this workspace's sandbox containers.
 * Options: `vsix: false` installs nothing (a test that loads the extension under development);
 * `indicator: false` neither asks for the indicator in every window nor waits for it;
 * `beforeOpen(server)` runs once the server is up, before the window opens; `open` goes to
 * openWorkbench; `failureShot` names a screenshot kept when the body fails.
 */
export async function withWindow(userSettings, body, { vsix = true, indicator: waitForIndicator = true, beforeOpen, open, failureShot } = {}) {
  if (vsix && !fs.existsSync(VSIX)) throw new Error(`${VSIX} does not exist (npm run package)`);
  // The indicator shows in every window only when asked to (by default only where a screen ran).
  const settings = waitForIndicator ? { 'botScreen.statusBar.visible': 'always', ...userSettings } : userSettings;
  const server = await startServer({ vsixPath: vsix ? VSIX : undefined, userSettings: settings });
  let workbench;
  try {
    if (beforeOpen) await beforeOpen(server);
    workbench = await openWorkbench(server, open);
    if (waitForIndicator) await indicator(workbench.page).waitFor({ timeout: 60_000 });
    await body(server, workbench.page);
  } catch (err) {
    if (workbench && failureShot) await screenshot(workbench.page, failureShot).catch(() => {});
    throw err;
  } finally {
    await workbench?.close();
    await server.stop();
    removeContainersOf(server.workspace);
  }
}

/** Developer: Reload Window, waiting for the new page (not the old one still on screen). */
export async function reloadWindow(page) {
  const navigated = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: 60_000 });
  await runCommand(page, 'Developer: Reload Window');
  await navigated;
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
  await indicator(page).waitFor({ timeout: 60_000 });
}

// ---------------------------------------------------------------------------
// The Screen webview's counters: the only place that knows how a test reads them.

/** What tells a Screen viewer's frame (the sidebar view or the editor panel) apart: its connection panel. */
export const SCREEN_FRAME = '#connection';

/**
 * The Screen view's title actions. Alone in the Bot Screen container they are the side bar's title
 * bar; beside the Screens tree they are the Screen pane's own header, which VS Code shows while
 * the pointer is over it (hovered here first).
 */
export async function screenViewActions(page) {
  const pane = page.locator('.part.sidebar .pane', { has: page.locator('.pane-header h3.title', { hasText: /^Screen$/ }) }).first();
  if (await pane.count() > 0) {
    await pane.locator('.pane-header').hover();
    return pane.locator('.pane-header .actions');
  }
  return page.locator('.part.sidebar .title-actions');
}

/**
 * The Screen viewer's counters, read from its connection panel's data-* attributes (webview/stats.ts;
 * present whether or not the panel is shown): connection ('idle' | 'connecting' | 'live' | 'closed'),
 * hostState, inControl, connects, framesDrawn and bytesIn, transport ('direct' | 'postMessage' |
 * undefined before a session), and the Date.now() of the session's
 * openedAt, firstFrameAt and lastFrameAt (0 before there is one). Undefined in a frame without one.
 */
export async function screenStats(frame) {
  return frame.evaluate((selector) => {
    const panel = document.querySelector(selector);
    if (!panel) return undefined;
    const d = panel.dataset;
    return {
      connection: d.state,
      hostState: d.hostState,
      inControl: d.inControl === 'true',
      connects: Number(d.connects),
      framesDrawn: Number(d.frames),
      bytesIn: Number(d.bytesIn),
      transport: d.transport,
      openedAt: Number(d.openedAt),
      firstFrameAt: Number(d.firstFrameAt),
      lastFrameAt: Number(d.lastFrameAt),
      rfbPaused: d.rfbPaused === 'true',
      resumedAt: Number(d.resumedAt ?? 0),
      resumedBy: d.resumedBy,
    };
  }, SCREEN_FRAME);
}

/** The frame of a Screen viewer (the side bar view or the editor panel, whichever is found first). */
export function screenFrame(page, timeoutMs) {
  return findWebviewFrame(page, SCREEN_FRAME, timeoutMs);
}

/** The sidebar view's or the editor panel's frame (only the sidebar offers "Open in Editor"). */
export async function viewerFrame(page, inEditor) {
  return waitFor(async () => {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      const match = await screenStats(frame).then(async (stats) => stats !== undefined && stats.hostState !== ''
        && (await frame.evaluate(() => Boolean(document.querySelector('#actions [data-action="openInEditor"]')))) !== inEditor).catch(() => false);
      if (match) return frame;
    }
    return undefined;
  }, 60_000, 200, inEditor ? 'the editor panel' : 'the Screen view');
}

/** The extension's own log (the "Bot Screen" channel) of this server, to print when a test fails. */
export function extensionLog(server) {
  const logs = path.join(server.userDataDir, 'logs');
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/Bot Screen\.log$/.test(entry.name)) found.push(full);
    }
  };
  try { walk(logs); } catch { /* no logs yet */ }
  return found.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
}

/**
 * Runs Start until the screen runs, at most `attempts` times: on a heavily loaded machine the
 * launcher can miss its start timeout, which says nothing about what a test checks after the start.
 */
export async function startScreenPatiently(page, attempts = 3) {
  for (let attempt = 1; ; attempt++) {
    await runCommand(page, TITLES.start, { timeoutMs: 20_000 });
    const frame = await screenFrame(page, 60_000);
    const state = await waitFor(async () => {
      const s = (await screenStats(frame))?.hostState;
      return s === 'running' || s === 'error' ? s : undefined;
    }, 180_000, 250, 'the screen to run or fail');
    if (state === 'running' || attempt >= attempts) return frame;
    console.log(`# start attempt ${attempt} failed on a loaded machine; starting again`);
  }
}

/** A terminal on the screen that prints random text without end, so the screen always streams. */
export function startFlood(container) {
  const script = [
    'set -a',
    '. "$(ls -d /tmp/botscreen-$(id -u)/*/env | head -n1)"',
    'set +a',
    'exec xfce4-terminal --disable-server --maximize -x bash -c '
      + '"while :; do head -c 3000 /dev/urandom | base64; done"',
  ].join('\n');
  execFileSync('docker', ['exec', '-d', '-u', 'pn', container, 'sh', '-c', script], { stdio: 'ignore' });
}

/**
 * The Open Recording panel that just opened, scrubbed to its end as a person would (its start may
 * be the desktop still coming up): what its canvas drew once that is a `width`×`height` desktop of
 * at least 10 colours. `what` names the wait; a failure says what the panel showed.
 */
export async function replayedEnd(page, width, height, what) {
  const replay = await findWebviewFrame(page, '#scrub', 30_000);
  await waitFor(() => replay.evaluate(() => document.body.dataset.loaded === 'true'), 30_000, 250, 'the recording to load');
  await replay.evaluate(() => {
    const scrub = document.getElementById('scrub');
    scrub.value = scrub.max;
    scrub.dispatchEvent(new Event('input'));
  });
  return waitFor(async () => {
    const c = await canvasColorCount(replay, { selector: '#output' });
    return c.width === width && c.height === height && c.colors >= 10 ? c : undefined;
  }, 30_000, 250, what).catch(async (err) => {
    await screenshot(page, 'ui-replay-panel-failed');
    const state = await replay.evaluate(() => ({ ...document.getElementById('output').dataset, canvases: [...document.querySelectorAll('canvas')].map((c) => `${c.id} ${c.width}x${c.height}`), status: document.getElementById('status').textContent }));
    throw new Error(`${err.message}: ${JSON.stringify(state)}`);
  });
}
