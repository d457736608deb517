// What a workspace may not decide, in a real VS Code (VS Code Server 1.99.3): a workspace
// .vscode/settings.json (as a cloned repository or the agent itself could write it) that names a
// recording docker, `placement: gateway`, `backend: local`, `autoStart: true` and another image.
// The recorder never runs (window open, Start, agent tools), the screen never goes to this
// machine, nothing starts by itself, Start asks before it replaces our container, an agent tool
// is refused with a sentence; in Restricted Mode nothing runs at all, not even the user's own
// docker, until the user trusts the workspace.
//
// Needs `npm run package` first (bot-screen.vsix and dist/extension.js) and the desktop image.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { bundleExtensionHostTests } from '../vscode/bundle.mjs';
import { REPO_ROOT, runCommand, screenshot, sh, sleep, waitFor } from './harness.mjs';
import {
  TITLES, containersOf, hostProcesses, indicator, withWindow, workspaceKey,
} from './botscreen.mjs';

const IMAGE = process.env.BOTSCREEN_IMAGE || 'botscreen/sandbox:desktop';
const tag = randomBytes(4).toString('hex');
const OLD = `botscreen/sandbox:trust-old-${tag}`;
const NEW = `botscreen/sandbox:trust-new-${tag}`;

/** A docker that records every call (then does what docker does): it must never be called. */
function recorder(dir) {
  const log = path.join(dir, 'calls');
  const program = path.join(dir, 'docker-recorder');
  fs.writeFileSync(log, '');
  fs.writeFileSync(program, `#!/bin/bash\nprintf '%s\\n' "$*" >> '${log}'\nexec docker "$@"\n`, { mode: 0o755 });
  return { program, calls: () => fs.readFileSync(log, 'utf8') };
}

/** A container of ours for this workspace (our labels and name), made earlier from OLD. */
function oldContainer(folder) {
  const key = workspaceKey(folder);
  return sh('docker', ['run', '-d', '--init', '--name', `botscreen-${key}`, '--label', 'dev.botscreen.managed=1',
    '--label', `dev.botscreen.workspace=${key}`, OLD, 'sleep', 'infinity']).trim();
}

function writeWorkspaceSettings(folder, settings) {
  fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
  fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify(settings, null, 2));
}

/** This workspace's screen on this machine, if any: its launcher or its Xvnc. */
const screenOnThisMachine = (folder) => [
  ...hostProcesses(`/${workspaceKey(folder)}/launcher\\.sh`),
  ...hostProcesses(`^Xvnc .*/${workspaceKey(folder)}/rfb\\.sock`),
];

const dialog = (page) => page.locator('.monaco-dialog-box');

async function answerDialog(page, button) {
  await dialog(page).locator('.monaco-button', { hasText: button }).first().click();
  await dialog(page).waitFor({ state: 'hidden', timeout: 10_000 });
}

test.before(() => {
  sh('docker', ['tag', IMAGE, OLD]);
  sh('docker', ['tag', IMAGE, NEW]);
});

test.after(() => {
  sh('docker', ['rmi', OLD, NEW]);
});

test('workspace settings that pick a program or move the screen are ignored; Start asks before replacing our container', { timeout: 360_000 }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-trust-'));
  const docker = recorder(work);
  let old;
  try {
    // Trusted (the harness turns workspace trust off): what a trusted workspace still may not decide.
    await withWindow({ 'botScreen.idleStopMinutes': 0 }, async (server, page) => {
      const folder = server.workspace;
      const key = workspaceKey(folder);
      const status = indicator(page);

      // Window open: told once, naming the settings and the file; nothing runs, nothing starts.
      const toast = page.locator('.notification-toast', { hasText: 'Bot Screen ignores' });
      await toast.waitFor({ timeout: 30_000 });
      const message = await toast.locator('.notification-list-item-message').textContent();
      for (const id of ['botScreen.sandbox.docker.path', 'botScreen.placement', 'botScreen.sandbox.backend', 'botScreen.autoStart']) {
        assert.ok(message.includes(`"${id}"`), `the notice names ${id}: ${message}`);
      }
      assert.ok(message.includes(path.join(folder, '.vscode', 'settings.json')), `the notice names the file: ${message}`);
      assert.ok(!message.includes('docker.image'), 'a workspace may name the image: not in the notice');
      await screenshot(page, 'ui-trust-ignored-notice');
      assert.match(await status.textContent(), /docker sandbox/, 'the indicator shows the sandbox, not this machine');
      await sleep(5_000);
      assert.equal(sh('docker', ['exec', old, 'pgrep', '-x', 'Xvnc']).trim(), '', 'autoStart from the workspace started nothing');
      assert.deepEqual(screenOnThisMachine(folder), []);
      assert.equal(docker.calls(), '', 'the workspace docker never ran at window open');
      await toast.locator('.monaco-button', { hasText: 'Open User Settings' }).click();
      await page.locator('.settings-editor').waitFor({ timeout: 15_000 });
      await waitFor(async () => /@ext:botscreen\.bot-screen/.test(await page.locator('.settings-editor .search-container .view-lines').textContent().catch(() => '')),
        10_000, 200, 'the settings editor to search Bot Screen\'s settings');
      await screenshot(page, 'ui-trust-user-settings');

      // Start: the modal names the container and both images. Cancel changes nothing.
      await runCommand(page, TITLES.start);
      await dialog(page).waitFor({ timeout: 30_000 });
      const question = await dialog(page).textContent();
      assert.ok(question.includes(`botscreen-${key}`) && question.includes(NEW) && question.includes(OLD), `the question: ${question}`);
      await screenshot(page, 'ui-trust-replace-question');
      await answerDialog(page, 'Cancel');
      assert.deepEqual(containersOf(folder), [old]);
      assert.equal(sh('docker', ['exec', old, 'pgrep', '-x', 'Xvnc']).trim(), '');

      // Keep: the screen starts in the current container, in the sandbox, not on this machine.
      await runCommand(page, TITLES.start);
      await dialog(page).waitFor({ timeout: 30_000 });
      await answerDialog(page, 'Keep Current Container');
      await waitFor(() => sh('docker', ['exec', old, 'pgrep', '-x', 'Xvnc']).trim() !== '', 60_000, 250, 'Xvnc in our container');
      // Running (the indicator's filled circle): the start is over, so Stop is not queued behind it.
      await status.locator('.codicon-circle-filled').waitFor({ timeout: 60_000 });
      assert.deepEqual(containersOf(folder), [old]);
      assert.deepEqual(screenOnThisMachine(folder), []);
      await runCommand(page, TITLES.stop);
      await waitFor(() => sh('docker', ['exec', old, 'pgrep', '-x', 'Xvnc']).trim() === '', 30_000, 200, 'Stop to end Xvnc');

      // Replace: only now is the old container removed, for one of the workspace's image.
      await runCommand(page, TITLES.start);
      await dialog(page).waitFor({ timeout: 30_000 });
      await answerDialog(page, 'Replace Container');
      const replacement = await waitFor(() => {
        const ids = containersOf(folder);
        return ids.length === 1 && ids[0] !== old && sh('docker', ['exec', ids[0], 'pgrep', '-x', 'Xvnc']).trim() !== '' ? ids[0] : undefined;
      }, 90_000, 500, 'a new container of the workspace image with the screen in it');
      assert.equal(sh('docker', ['inspect', '-f', '{{.Config.Image}}', replacement]).trim(), NEW);
      assert.deepEqual(screenOnThisMachine(folder), []);
      assert.equal(docker.calls(), '', 'the workspace docker never ran');
    }, {
      beforeOpen: (server) => {
        writeWorkspaceSettings(server.workspace, {
          'botScreen.sandbox.docker.path': docker.program,
          'botScreen.placement': 'gateway',
          'botScreen.sandbox.backend': 'local',
          'botScreen.autoStart': true,
          'botScreen.sandbox.docker.image': NEW,
        });
        old = oldContainer(server.workspace);
        assert.match(old, /^[0-9a-f]{64}$/, 'the earlier container of ours');
      },
    });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});

test('agent tools: the workspace\'s docker never runs, the screen never goes to this machine, a replacement is refused with a sentence', { timeout: 360_000 }, async () => {
  assert.ok(fs.existsSync(path.join(REPO_ROOT, 'dist', 'extension.js')), 'dist/extension.js exists (npm run package)');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-trust-eht-'));
  const docker = recorder(work);
  const testsFile = path.join(work, 'trustTools.js');
  await bundleExtensionHostTests(testsFile, 'trustTools.ts');
  const resultFile = path.join(work, 'result.json');
  const saved = { ...process.env };
  try {
    // The extension host inherits the server's environment, fixed when the server starts: the
    // result and config files are named here, the config is written once the container exists.
    const configFile = path.join(work, 'config.json');
    Object.assign(process.env, { BOTSCREEN_EHT_RESULT: resultFile, BOTSCREEN_EHT_CONFIG: configFile });
    // Trust off: the workspace counts as trusted (the extension development window would ask
    // again); this test is about what a trusted workspace still may not decide. No VSIX: the
    // window loads this repository as the extension under development.
    await withWindow({ 'security.workspace.trust.enabled': false, 'botScreen.idleStopMinutes': 0, 'botScreen.screen.geometry': '1024x640' }, async (server, page) => {
      const folder = server.workspace;
      const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
      const payload = JSON.stringify([['extensionDevelopmentPath', remote(REPO_ROOT)], ['extensionTestsPath', remote(testsFile)]]);
      await page.goto(`${server.url}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(payload)}`);
      await waitFor(() => fs.existsSync(resultFile), 180_000, 1000, `the result file ${resultFile} (none means the module never ran)`);
      const report = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
      for (const r of report.results) console.log(`# ${r.ok ? 'ok' : 'FAILED'} ${r.name} (${r.ms} ms)`);
      assert.equal(report.fatal, undefined, `the test module failed: ${report.fatal}`);
      assert.equal(report.results.length, 3, 'every case ran');
      assert.deepEqual(report.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`), []);
      assert.equal(docker.calls(), '', 'the workspace docker never ran');
    }, {
      vsix: false,
      indicator: false,
      beforeOpen: (server) => {
        const folder = server.workspace;
        writeWorkspaceSettings(folder, {
          'botScreen.sandbox.docker.path': docker.program,
          'botScreen.placement': 'gateway',
          'botScreen.sandbox.backend': 'local',
          'botScreen.sandbox.docker.image': NEW,
        });
        const old = oldContainer(folder);
        fs.writeFileSync(configFile, JSON.stringify({
          recorderLog: path.join(work, 'calls'),
          container: old,
          key: workspaceKey(folder),
          oldImage: OLD,
          newImage: NEW,
        }));
      },
    });
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    fs.rmSync(work, { recursive: true, force: true });
  }
});

test('Restricted Mode runs nothing, not even the user\'s own docker; trusting the workspace resumes', { timeout: 300_000 }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-trust-rm-'));
  const docker = recorder(work);
  try {
    // The user's own settings this time: a recording docker (so a call would show) and autoStart.
    // The indicator is asked for, and waited for once Restricted Mode shows.
    await withWindow({
      'security.workspace.trust.enabled': true,
      'botScreen.sandbox.docker.path': docker.program,
      'botScreen.autoStart': true,
      'botScreen.idleStopMinutes': 0,
      'botScreen.statusBar.visible': 'always',
    }, async (server, page) => {
      const folder = server.workspace;
      await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 30_000 });
      await indicator(page).waitFor({ timeout: 60_000 });
      await sleep(5_000);
      assert.equal(docker.calls(), '', 'nothing ran at window open (autoStart is the user\'s own, still nothing)');
      await runCommand(page, TITLES.start);
      await page.locator('.notification-toast', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 30_000 });
      await screenshot(page, 'ui-trust-restricted');
      assert.equal(docker.calls(), '', 'Start ran nothing');
      assert.deepEqual(containersOf(folder), []);
      assert.deepEqual(screenOnThisMachine(folder), []);

      // The positive control: once the user trusts the workspace, their autoStart runs, through
      // their recording docker (so the recorder would have shown any call above).
      await page.locator('.notification-toast', { hasText: 'Restricted Mode' }).locator('.monaco-button', { hasText: 'Manage Workspace Trust' }).click();
      await page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust/ }).first().click();
      await waitFor(() => containersOf(folder).length === 1 && sh('docker', ['exec', containersOf(folder)[0], 'pgrep', '-x', 'Xvnc']).trim() !== '',
        120_000, 500, 'the user\'s autoStart to start the screen after trust');
      assert.match(docker.calls(), /\brun -d\b/, 'the user\'s docker made the container');
    }, { indicator: false, open: { trust: false, trustTimeoutMs: 30_000 } });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});
