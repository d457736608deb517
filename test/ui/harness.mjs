// Drives a real VS Code (the VS Code Server 1.99.3 web workbench, installed by
// scripts/install-test-vscode.sh) with Debian's chromium through playwright-core.
// Used by the UI tests: `node --test test/ui/*.test.mjs`. What the tests know about Bot Screen
// itself (its window, labels, workspace key, connection-panel counters) is in test/ui/botscreen.mjs.
//
// Everything a test starts is ended by server.stop() / workbench.close(); a process
// exit handler kills whatever a failed test left behind.

import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CACHE_DIR = process.env.BOTSCREEN_CACHE || path.join(os.homedir(), '.cache', 'botscreen');
export const SERVER_MAIN = path.join(
  CACHE_DIR, 'vscode-server', 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');
export const CHROMIUM_PATH = process.env.BOTSCREEN_CHROMIUM || '/usr/bin/chromium';
const INSTALL_HINT = 'run scripts/install-test-vscode.sh first';

// User settings every test window gets, under the test's own userSettings.
// They keep the first-run clutter (welcome page, walkthroughs, update and
// marketplace checks) out of the window.
export const DEFAULT_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  // Workspace trust off: every window is trusted without the startup question, which on a loaded
  // machine can come after any fixed wait and then blocks the palette (and the extension
  // development window asks again). Tests of Restricted Mode turn it on (test/ui/trust.test.mjs).
  'security.workspace.trust.enabled': false,
};

let playwright;
function loadPlaywright() {
  if (playwright) return playwright;
  const harnessDir = path.join(CACHE_DIR, 'harness');
  try {
    playwright = createRequire(path.join(harnessDir, 'package.json'))('playwright-core');
  } catch (err) {
    throw new Error(`playwright-core not found in ${harnessDir}/node_modules (${INSTALL_HINT}): ${err.message}`);
  }
  return playwright;
}

// ---------------------------------------------------------------------------
// Process bookkeeping (Linux /proc): the server, its extension hosts, file
// watchers, pty host and terminals (node-pty starts those in a session of their
// own, so the process group alone does not cover them).

function readProcStat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { pid, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]) };
  } catch {
    return undefined; // gone
  }
}

function allPids() {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
}

function hasMarker(pid, marker) {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').includes(marker);
  } catch {
    return false;
  }
}

/** Live (non-zombie) processes that belong to a server: its process group, its descendants, and
 *  anything that carries the server's marker in its environment (orphans re-parented to init). */
function serverProcesses(rootPid, marker) {
  const stats = allPids().map(readProcStat).filter((s) => s && s.state !== 'Z' && s.pid !== process.pid);
  const children = new Map();
  for (const s of stats) {
    if (!children.has(s.ppid)) children.set(s.ppid, []);
    children.get(s.ppid).push(s.pid);
  }
  const found = new Set();
  const queue = [rootPid];
  while (queue.length) {
    const pid = queue.pop();
    for (const c of children.get(pid) || []) if (!found.has(c)) { found.add(c); queue.push(c); }
  }
  for (const s of stats) {
    if (s.pid === rootPid || s.pgid === rootPid || hasMarker(s.pid, marker)) found.add(s.pid);
  }
  return [...found].filter((pid) => { const s = readProcStat(pid); return s && s.state !== 'Z'; });
}

function signalAll(pids, signal) {
  for (const pid of pids) {
    try { process.kill(pid, signal); } catch { /* already gone */ }
  }
}

const liveServers = new Set();
function killAllServers() {
  for (const srv of liveServers) signalAll(serverProcesses(srv.pid, srv.marker), 'SIGKILL');
}
// Last resort for a test that failed before calling stop(), or a run that was interrupted
// (node --test cancels a timed-out file with SIGTERM): synchronous SIGKILL.
process.on('exit', killAllServers);
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.once(signal, () => { killAllServers(); process.exit(code); });
}

// ---------------------------------------------------------------------------

/**
 * Imports a TypeScript module of this repository (product or test support) into these ES-module
 * tests: bundled once per process by esbuild (as the product build does), so a test uses the
 * product's own code instead of a copy of it.
 */
const tsModules = new Map();
export function importTs(file) {
  if (!tsModules.has(file)) {
    tsModules.set(file, (async () => {
      const { build } = await import('esbuild');
      const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'botscreen-ts-'));
      const out = path.join(dir, `${path.basename(file, '.ts')}.mjs`);
      await build({ entryPoints: [path.join(REPO_ROOT, file)], outfile: out, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
      try {
        return await import(pathToFileURL(out).href);
      } finally {
        await fsp.rm(dir, { recursive: true, force: true });
      }
    })());
  }
  return tsModules.get(file);
}

// sh, sleep, waitFor and hostProcesses: the ones every test uses (test/support/process.ts).
const support = await importTs('test/support/process.ts');
export const { hostProcesses, sh, sleep, waitFor } = support;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function httpAnswers(url) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000 }, (res) => { res.resume(); resolve(true); });
    req.on('timeout', () => { req.destroy(); resolve(false); });
    req.on('error', () => resolve(false));
  });
}

/** pid-independent check that `pid` holds the socket listening on 127.0.0.1:port. */
function listenerIsOurs(port, pid) {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  let inode;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try { text = fs.readFileSync(file, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[1].endsWith(`:${portHex}`) && f[3] === '0A') inode = f[9];
    }
  }
  if (!inode) return false;
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try { return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`; } catch { return false; }
    });
  } catch {
    return false;
  }
}

function tail(file, lines = 30) {
  try { return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n'); } catch { return ''; }
}

/**
 * Starts a fresh VS Code Server (own temp dir, user data, extensions, workspace) on 127.0.0.1.
 * With `connectionToken`, every request must carry a random token (the `tkn` query of the first
 * page load, a cookie after that), so other local users get 403; the token is in a 0600 file in
 * the server's 0700 directory, never in argv (which every local user can read in /proc). The
 * tests run without one.
 * @param {{ vsixPath?: string, userSettings?: object, startTimeoutMs?: number, connectionToken?: boolean }} [opts]
 * @returns {Promise<{ url: string, port: number, pid: number, token?: string, dir: string, workspace: string,
 *   userDataDir: string, extensionsDir: string, logPath: string, processes(): number[], stop(): Promise<void> }>}
 *   processes() lists the live pids the server started (server, extension hosts, watchers, pty host,
 *   terminals); stop() ends all of them, resolves once they are gone, and then deletes the temp dir
 *   (workspace and log included) unless stop({ keepFiles: true }) or BOTSCREEN_UI_KEEP=1.
 */
export async function startServer({ vsixPath, userSettings = {}, startTimeoutMs = 60_000, connectionToken = false } = {}) {
  if (!fs.existsSync(SERVER_MAIN)) throw new Error(`VS Code Server not found at ${SERVER_MAIN} (${INSTALL_HINT})`);
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'botscreen-ui-'));
  const userDataDir = path.join(dir, 'user-data');
  const extensionsDir = path.join(dir, 'extensions');
  const workspace = path.join(dir, 'workspace');
  const logPath = path.join(dir, 'server.log');
  for (const d of [path.join(userDataDir, 'User'), extensionsDir, workspace]) await fsp.mkdir(d, { recursive: true });
  // Checked on this server (1.99.3 web): a window reads both <user-data-dir>/User/settings.json
  // (the user layer, all scopes) and <user-data-dir>/Machine/settings.json (the "Remote" layer:
  // overrides User, ignores application-scoped settings such as security.workspace.trust.enabled).
  // Only Machine/settings.json is watched while a window is open; see updateSettings().
  const settings = { ...DEFAULT_SETTINGS, ...userSettings };
  await fsp.writeFile(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));

  let token;
  let tokenArgs = ['--without-connection-token'];
  if (connectionToken) {
    token = randomBytes(32).toString('base64url');
    const tokenFile = path.join(dir, 'connection-token');
    await fsp.writeFile(tokenFile, token, { mode: 0o600, flag: 'wx' });
    tokenArgs = ['--connection-token-file', tokenFile];
  }

  const marker = `BOTSCREEN_UI_SERVER=${randomUUID()}`;
  const env = { ...process.env, [marker.split('=')[0]]: marker.split('=')[1] };
  const dirArgs = ['--user-data-dir', userDataDir, '--extensions-dir', extensionsDir];

  if (vsixPath) {
    const r = spawnSync(process.execPath, [SERVER_MAIN, '--install-extension', path.resolve(vsixPath), '--force', ...dirArgs],
      { env, encoding: 'utf8', timeout: 120_000 });
    const out = `${r.stdout || ''}${r.stderr || ''}`;
    await fsp.writeFile(path.join(dir, 'install-extension.log'), out);
    if (r.status !== 0 || !/successfully installed/i.test(out)) {
      await fsp.rm(dir, { recursive: true, force: true });
      throw new Error(`installing ${vsixPath} failed (exit ${r.status}):\n${out}`);
    }
  }

  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const logFd = fs.openSync(logPath, 'a');
    const child = spawn(process.execPath, [SERVER_MAIN,
      '--host', '127.0.0.1', '--port', String(port),
      ...tokenArgs, '--accept-server-license-terms', '--disable-websocket-compression',
      ...dirArgs], { env, cwd: dir, detached: true, stdio: ['ignore', logFd, logFd] });
    fs.closeSync(logFd);
    const srv = { pid: child.pid, marker };
    liveServers.add(srv);
    let exited = false;
    child.on('exit', () => { exited = true; });
    child.unref();
    const url = `http://127.0.0.1:${port}`;

    const stop = async ({ keepFiles = Boolean(process.env.BOTSCREEN_UI_KEEP) } = {}) => {
      if (!liveServers.has(srv)) return;
      let procs = serverProcesses(srv.pid, marker);
      signalAll(procs, 'SIGTERM');
      try {
        await waitFor(() => serverProcesses(srv.pid, marker).length === 0, 5000, 100);
      } catch {
        procs = serverProcesses(srv.pid, marker);
        signalAll(procs, 'SIGKILL');
        await waitFor(() => serverProcesses(srv.pid, marker).length === 0, 5000, 100,
          `server processes ${procs.join(',')} to end after SIGKILL`);
      }
      liveServers.delete(srv);
      if (!keepFiles) await fsp.rm(dir, { recursive: true, force: true });
    };

    try {
      await waitFor(async () => {
        if (exited) throw new Error(`server exited early; log:\n${tail(logPath)}`);
        return httpAnswers(url);
      }, startTimeoutMs, 250, `server on ${url} to answer`);
      if (exited) throw new Error(`server exited; log:\n${tail(logPath)}`);
      // A server that hit EADDRINUSE logs it and stays alive: make sure the
      // listener on this port is our process, not someone else's.
      if (!listenerIsOurs(port, child.pid)) throw new Error(`port ${port} answers, but not from pid ${child.pid}`);
      const processes = () => serverProcesses(srv.pid, marker);
      return { url, port, pid: child.pid, token, dir, workspace, userDataDir, extensionsDir, logPath, processes, stop };
    } catch (err) {
      lastError = err;
      await stop({ keepFiles: true }); // keep the log for the next attempt / the error message
    }
  }
  throw new Error(`could not start the VS Code Server: ${lastError && lastError.message}\nlog: ${logPath}`);
}

/**
 * Changes settings while windows are open: merges `settings` into <user-data-dir>/Machine/settings.json,
 * which open windows pick up within about 0.2 s (edits of User/settings.json are not seen until the
 * next window). Application-scoped settings are ignored there; pass those to startServer().
 */
export async function updateSettings(server, settings) {
  const file = path.join(server.userDataDir, 'Machine', 'settings.json');
  let current = {};
  try { current = JSON.parse(await fsp.readFile(file, 'utf8')); } catch { /* none yet */ }
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, JSON.stringify({ ...current, ...settings }, null, 2));
}

/** The address that opens the server's workbench on its workspace folder (with its token, if any). */
export function workbenchUrl(server) {
  return `${server.url}/?${server.token ? `tkn=${server.token}&` : ''}folder=${encodeURIComponent(server.workspace)}`;
}

/**
 * Opens the server's workbench on its workspace folder in Debian's chromium. `trustAsked` says
 * whether VS Code asked to trust the folder; the answer is yes unless `answerTrust` is false.
 * @returns {Promise<{ browser: import('playwright-core').Browser, page: import('playwright-core').Page, close(): Promise<void>, trustAsked: boolean }>}
 */
export async function openWorkbench(server, { trustTimeoutMs = 5000, loadTimeoutMs = 60_000, answerTrust = true, trust = true } = {}) {
  const { chromium } = loadPlaywright();
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const close = async () => {
    let timer;
    await Promise.race([browser.close().catch(() => {}), new Promise((r) => { timer = setTimeout(r, 10_000); })]);
    clearTimeout(timer);
  };
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(workbenchUrl(server), { timeout: loadTimeoutMs });
    await page.waitForSelector('.monaco-workbench', { timeout: loadTimeoutMs });
    const trustAsked = await answerTrustDialog(page, trustTimeoutMs, answerTrust, trust);
    return { browser, page, close, trustAsked };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Answers the workspace-trust dialog if it shows up within timeoutMs: "Yes, I trust", or with
 * trust false "No, I don't trust" (the window then runs in Restricted Mode); with answer false it
 * is left open. Returns whether it was asked.
 */
async function answerTrustDialog(page, timeoutMs, answer = true, trust = true) {
  const button = page.locator('.monaco-dialog-box .monaco-button', { hasText: /trust/i }).first();
  try {
    await button.waitFor({ state: 'visible', timeout: timeoutMs });
  } catch {
    return false; // no dialog
  }
  if (!answer) return true;
  await page.locator('.monaco-dialog-box .monaco-button', { hasText: trust ? /^Yes/ : /^No/ }).first().click();
  await page.locator('.monaco-dialog-box').waitFor({ state: 'hidden', timeout: 10_000 });
  return true;
}

/** Moves keyboard focus to the workbench itself: a focused webview (noVNC canvas) swallows F1. */
export async function focusWorkbench(page) {
  const point = await page.evaluate(() => {
    // An empty spot of the status bar (or, failing that, of the activity bar).
    for (const sel of ['.part.statusbar', '.part.activitybar']) {
      const part = document.querySelector(sel);
      if (!part) continue;
      const r = part.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const horizontal = r.width > r.height;
      const length = horizontal ? r.width : r.height;
      // Try the middle first, then step outwards in both directions.
      for (let k = 0; k < length / 4; k++) {
        const offset = (k % 2 ? 1 : -1) * Math.ceil(k / 2) * 8;
        const x = horizontal ? r.left + r.width / 2 + offset : r.left + r.width / 2;
        const y = horizontal ? r.top + r.height / 2 : r.top + r.height / 2 + offset;
        if (x < r.left || x >= r.right || y < r.top || y >= r.bottom) continue;
        const el = document.elementFromPoint(x, y);
        if (el && part.contains(el) && !el.closest('.statusbar-item, .action-item, a, button, [role=button]')) {
          return { x, y };
        }
      }
    }
    return undefined;
  });
  if (point) await page.mouse.click(point.x, point.y);
  else await page.keyboard.press('Escape');
}

/** Opens the command palette with `>text` typed in; its widget and input box. */
export async function openPalette(page, text, { timeoutMs = 10_000 } = {}) {
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('input.input');
  // A webview that still held focus can take F1, and one that takes focus as it opens (a new
  // editor panel) closes the palette again: press again, after moving focus back to the
  // workbench, until the palette stays open with the text in it.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await focusWorkbench(page);
    await page.keyboard.press('F1');
    const wait = () => Math.min(3_000, Math.max(1, deadline - Date.now()));
    try {
      await input.waitFor({ state: 'visible', timeout: wait() });
      await input.fill(`>${text}`, { timeout: wait() });
      if (await input.isVisible() && (await input.inputValue()) === `>${text}`) break;
    } catch (err) {
      if (Date.now() >= deadline) throw err;
    }
    if (Date.now() >= deadline) throw new Error(`the command palette did not stay open for "${text}"`);
  }
  return { widget, input };
}

/**
 * Runs a command through the palette, by its full title (e.g. "Bot Screen: Start Screen").
 * Returns the Date.now() at which the command was chosen (Enter or a click), for timings.
 */
export async function runCommand(page, title, { timeoutMs = 10_000 } = {}) {
  const { widget, input } = await openPalette(page, title, { timeoutMs });
  // Wait for the row whose label is exactly this title (not merely a prefix of it).
  const row = await waitFor(async () => {
    const rows = await widget.locator('.quick-input-list .monaco-list-row').all();
    for (const r of rows) {
      const label = (await r.locator('.label-name').first().textContent().catch(() => '')) || '';
      if (label.trim() === title) return r;
    }
    return undefined;
  }, timeoutMs, 100, `palette row "${title}"`);
  const focused = (await row.getAttribute('class') || '').split(/\s+/).includes('focused');
  const chosenAt = Date.now();
  if (focused) await page.keyboard.press('Enter');
  else await row.click();
  // Accepted: the palette closes, or (for commands that open a picker of their own, such as
  // "Go to File...") the input no longer holds our text.
  await waitFor(async () => !(await widget.isVisible()) || (await input.inputValue().catch(() => '')) !== `>${title}`,
    timeoutMs, 100, `palette to accept "${title}"`);
  return chosenAt;
}

/**
 * The frame (of any depth) that has `what`: a global's name (`acquireVsCodeApi`), or a CSS selector
 * starting with `#` (`SCREEN_FRAME`, the Screen view's connection panel); webview frames reorder,
 * so pick by content.
 */
export async function findWebviewFrame(page, what, timeoutMs = 30_000) {
  return waitFor(async () => {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      const has = await frame.evaluate((name) => (name.startsWith('#') ? document.querySelector(name) !== null : typeof window[name] !== 'undefined'), what)
        .catch(() => false);
      if (has) return frame;
    }
    return undefined;
  }, timeoutMs, 250, `a frame with ${what.startsWith('#') ? what : `window.${what}`}`);
}

/**
 * Distinct colours of the largest canvas (at least minWidth wide; among those matching `selector`)
 * in `frame`, sampled every `step`-th pixel. { width: 0, height: 0, colors: 0 } when there is none.
 * Read webview frames only: in the main frame an editor's minimap canvas alone has ~150 colours.
 */
export async function canvasColorCount(frame, { minWidth = 0, step = 97, selector = 'canvas' } = {}) {
  return frame.evaluate(({ minWidth, step, selector }) => {
    const canvases = [...document.querySelectorAll(selector)].filter((c) => c.width >= minWidth && c.height > 0);
    if (canvases.length === 0) return { width: 0, height: 0, colors: 0 };
    const c = canvases.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
    const ctx = c.getContext('2d');
    // A WebGL canvas (e.g. xterm's renderer) reads back blank once presented: say so, rather than
    // report one colour.
    if (!ctx) throw new Error(`the largest canvas (${c.width}x${c.height}) is not a 2D canvas`);
    const data = ctx.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let p = 0; p < c.width * c.height; p += step) {
      const i = p * 4;
      seen.add(((data[i] << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3]) >>> 0);
    }
    return { width: c.width, height: c.height, colors: seen.size };
  }, { minWidth, step, selector });
}

/** Saves a PNG of the page to <repo>/test-output/<name>.png and returns its path. */
export async function screenshot(page, name) {
  const dir = path.join(REPO_ROOT, 'test-output');
  await fsp.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name.replace(/[^\w.-]+/g, '_')}.png`);
  await page.screenshot({ path: file });
  return file;
}
