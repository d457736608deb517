// Proves the UI harness against a real VS Code Server with no extension of ours:
// user settings reach the window, palette commands run, the terminal (node-pty)
// runs a shell, a built-in webview (Markdown preview) is found by content and its
// canvas read back, and stop() leaves no process behind.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import {
  canvasColorCount, findWebviewFrame, openWorkbench, runCommand, screenshot, startServer, waitFor,
} from './harness.mjs';

test('harness drives the real workbench: settings, palette, terminal, webview, cleanup', { timeout: 240_000 }, async () => {
  const server = await startServer({
    userSettings: { 'window.title': 'BOTSCREEN-SMOKE ${rootName}', 'terminal.integrated.gpuAcceleration': 'off' },
  });
  await fs.writeFile(path.join(server.workspace, 'README.md'), '# Smoke heading\n\nHello from the harness.\n');
  let workbench;
  let failed = false;
  try {
    workbench = await openWorkbench(server);
    const { page } = workbench;

    // The settings file the harness writes is the one the window reads.
    await waitFor(async () => (await page.title()).startsWith('BOTSCREEN-SMOKE'), 15_000, 200, 'window title from user settings');

    // Terminal: the panel is closed, the command opens it, and a command typed into the shell
    // prints its output (this needs the node-pty build). The DOM renderer makes the text readable.
    assert.equal(await page.locator('.part.panel .terminal-wrapper').count(), 0, 'no terminal before the command');
    await runCommand(page, 'View: Toggle Terminal');
    const terminalText = () => page.locator('.part.panel .xterm-rows').first()
      .evaluate((el) => [...el.children].map((row) => row.textContent).join('\n'));
    await waitFor(async () => /[#$]\s*$/m.test(await terminalText()), 30_000, 250, 'a shell prompt');
    // The palette hands focus back to where it was (the status bar runCommand clicked): click in,
    // and type only once the terminal has the keyboard (keys typed before went nowhere on a
    // loaded CI machine: the prompt stayed empty). A typed line that did not reach the prompt at
    // all is typed once more; the shell must still print the command's output.
    const terminalHasKeyboard = () => page.evaluate(() => document.activeElement?.classList.contains('xterm-helper-textarea') ?? false);
    await page.locator('.part.panel .xterm').first().click();
    await waitFor(terminalHasKeyboard, 15_000, 100, 'the terminal to take the keyboard');
    await page.keyboard.type('echo BOTSCREEN_$((6*7))\n');
    const echoed = async () => /^BOTSCREEN_42\s*$/m.test(await terminalText());
    await waitFor(echoed, 10_000, 200, 'the echo output').catch(async (err) => {
      if ((await terminalText()).includes('echo BOTSCREEN_')) {
        throw err; // the shell got the line and printed nothing
      }
      await page.locator('.part.panel .xterm').first().click();
      await waitFor(terminalHasKeyboard, 15_000, 100, 'the terminal to take the keyboard again');
      await page.keyboard.type('echo BOTSCREEN_$((6*7))\n');
      await waitFor(echoed, 15_000, 200, 'the echo output');
    });
    await screenshot(page, 'smoke-terminal');

    // Webview: the built-in Markdown preview, picked by content.
    await runCommand(page, 'Go to File...');
    await page.keyboard.type('README.md');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'README.md' }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press('Enter');
    await page.locator('.editor-instance .monaco-editor').first().waitFor({ state: 'visible', timeout: 15_000 });
    await runCommand(page, 'Markdown: Open Preview to the Side');
    const frame = await findWebviewFrame(page, 'acquireVsCodeApi', 30_000);
    const heading = await waitFor(() => frame.locator('h1').first().textContent().catch(() => ''), 15_000, 200, 'preview heading');
    assert.equal(heading.trim(), 'Smoke heading');
    // canvasColorCount reads a 2D canvas in a webview frame (noVNC's kind); draw one there.
    await frame.evaluate(() => {
      const c = Object.assign(document.createElement('canvas'), { width: 640, height: 400 });
      const g = c.getContext('2d');
      for (let x = 0; x < 640; x += 40) { g.fillStyle = `hsl(${x / 2}, 80%, 50%)`; g.fillRect(x, 0, 40, 400); }
      document.body.append(c);
    });
    const counted = await canvasColorCount(frame, { minWidth: 600 });
    assert.deepEqual(counted, { width: 640, height: 400, colors: 16 });
    await screenshot(page, 'smoke-markdown-preview');

    // A webview that swallows keys (as a focused noVNC canvas does) must not break runCommand.
    await frame.evaluate(() => window.addEventListener('keydown', (e) => { e.stopPropagation(); e.preventDefault(); }, true));
    await frame.locator('h1').first().click();
    await runCommand(page, 'View: Hide Panel');
    await waitFor(async () => (await page.locator('.part.panel').count()) === 0 || !(await page.locator('.part.panel').isVisible()),
      10_000, 200, 'the panel to close');
  } catch (err) {
    if (workbench) await screenshot(workbench.page, 'smoke-failure').catch(() => {});
    failed = true;
    throw err;
  } finally {
    await workbench?.close();
    const started = server.processes();
    await server.stop({ keepFiles: failed }); // on failure, keep the server log (path in the message below)
    if (failed) console.error(`server log: ${server.logPath}`);
    assert.ok(started.length > 0, 'the server had processes to stop');
    assert.deepEqual(server.processes(), [], 'stop() left no process behind');
  }
});
