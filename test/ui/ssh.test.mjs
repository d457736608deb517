// The screen over SSH in a real VS Code: a throwaway sshd on 127.0.0.1 (test/support/sshd.ts),
// the palette's Start Screen, and the Xfce desktop on the Screen view's canvas.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import {
  REPO_ROOT, canvasColorCount, SCREEN_FRAME, findWebviewFrame, openWorkbench, runCommand, screenshot, startServer, waitFor,
} from './harness.mjs';
import { hostProcesses, sh, workspaceKey } from './botscreen.mjs';

const VSIX = process.env.BOTSCREEN_VSIX || path.join(REPO_ROOT, 'bot-screen.vsix');

/** The TypeScript sshd helper, bundled for this ES module. */
async function loadSshd() {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-sshd-helper-')), 'sshd.mjs');
  await build({ entryPoints: [path.join(REPO_ROOT, 'test', 'support', 'sshd.ts')], outfile: out, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
  return import(pathToFileURL(out).href);
}

test('over SSH: Start Screen shows the SSH host\'s desktop in the Screen view; Stop stops it', { timeout: 240_000 }, async () => {
  const { startSshd } = await loadSshd();
  const sshd = await startSshd();
  const ssh = sshd.settings();
  let server;
  let workbench;
  try {
    server = await startServer({
      vsixPath: VSIX,
      userSettings: {
        'botScreen.statusBar.visible': 'always',
        'botScreen.sandbox.backend': 'ssh',
        'botScreen.sandbox.ssh.host': ssh.host,
        'botScreen.sandbox.ssh.port': ssh.port,
        'botScreen.sandbox.ssh.user': ssh.user,
        'botScreen.sandbox.ssh.identityFile': ssh.identityFile,
        'botScreen.sandbox.ssh.path': ssh.path,
      },
    });
    workbench = await openWorkbench(server);
    const { page } = workbench;
    await page.locator('.statusbar-item', { hasText: 'Screen:' }).first().waitFor({ timeout: 60_000 });
    await runCommand(page, 'Bot Screen: Start Screen');
    const frame = await findWebviewFrame(page, SCREEN_FRAME, 60_000);
    await waitFor(async () => {
      const c = await canvasColorCount(frame, { minWidth: 1280 });
      return c.width === 1280 && c.height === 800 && c.colors >= 10;
    }, 45_000, 250, 'the SSH host\'s desktop on the canvas');
    await screenshot(page, 'ui-ssh-screen');
    assert.match(await frame.locator('#where').textContent(), /inside the ssh sandbox/);
    const key = workspaceKey(server.workspace);
    const xvnc = () => sh('pgrep', ['-a', '-u', String(sshd.uid), '-x', 'Xvnc']).split('\n').filter((l) => l.includes(`/${key}/rfb.sock`));
    assert.equal(xvnc().length, 1, 'Xvnc runs as the SSH login user');
    assert.ok(sshd.invocations().length > 0, 'the screen went through ssh');

    await runCommand(page, 'Bot Screen: Stop Screen');
    await waitFor(async () => (await frame.locator('#badge').textContent()) === 'stopped', 15_000, 200, 'the view to say stopped');
    await waitFor(() => xvnc().length === 0, 10_000, 200, 'Xvnc of the SSH user to end');
  } finally {
    await workbench?.close();
    await server?.stop();
    await sshd.stop();
    // The extension's ssh control master for this server (if the window did not close it).
    for (const line of hostProcesses(`ssh: /tmp/botscreen-ssh-\\d+/.*\\[mux\\]`)) sh('kill', [line.split(' ')[0]]);
  }
});
