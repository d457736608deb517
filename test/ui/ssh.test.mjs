// The screen over SSH in a real VS Code: a throwaway sshd on 127.0.0.1 (test/support/sshd.ts),
// the palette's Start Screen, and the Xfce desktop on the Screen view's canvas.
import assert from 'node:assert/strict';
import test from 'node:test';
import { canvasColorCount, importTs, runCommand, screenshot, sh, waitFor } from './harness.mjs';
import { TITLES, hostProcesses, screenFrame, withWindow, workspaceKey } from './botscreen.mjs';

test('over SSH: Start Screen shows the SSH host\'s desktop in the Screen view; Stop stops it', { timeout: 240_000 }, async () => {
  const { startSshd } = await importTs('test/support/sshd.ts');
  const sshd = await startSshd();
  const ssh = sshd.settings();
  try {
    await withWindow({
      'botScreen.sandbox.backend': 'ssh',
      'botScreen.sandbox.ssh.host': ssh.host,
      'botScreen.sandbox.ssh.port': ssh.port,
      'botScreen.sandbox.ssh.user': ssh.user,
      'botScreen.sandbox.ssh.identityFile': ssh.identityFile,
      'botScreen.sandbox.ssh.path': ssh.path,
    }, async (server, page) => {
      await runCommand(page, TITLES.start);
      const frame = await screenFrame(page, 60_000);
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

      await runCommand(page, TITLES.stop);
      await waitFor(async () => (await frame.locator('#badge').textContent()) === 'stopped', 15_000, 200, 'the view to say stopped');
      await waitFor(() => xvnc().length === 0, 10_000, 200, 'Xvnc of the SSH user to end');
    });
  } finally {
    await sshd.stop();
    // The extension's ssh control master for this server (if the window did not close it).
    for (const line of hostProcesses(`ssh: /tmp/botscreen-ssh-\\d+/.*\\[mux\\]`)) sh('kill', [line.split(' ')[0]]);
  }
});
