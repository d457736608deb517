// The agent tools inside the real extension host of a real VS Code (VS Code Server 1.99.3): the
// workbench loads this repository as the extension under development and runs
// test/vscode/agentTools.ts as its extensionTestsPath (both given in the URL payload; the server
// ignores them on its command line). That module calls the tools through vscode.lm.invokeTool and
// writes a result file, which this driver reads: the workbench's own exit status says nothing.
//
// Needs `npm run package` first (dist/extension.js as shipped) and the desktop image.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { bundleExtensionHostTests } from '../vscode/bundle.mjs';
import { REPO_ROOT, sleep, waitFor } from './harness.mjs';
import { withWindow } from './botscreen.mjs';

const WIDTH = 1024;

/**
 * Answers "Yes" to the questions Bot Screen's tools ask (VS Code shows a tool's confirmation as a
 * modal dialog when it is invoked outside a chat) and records every dialog's title and text.
 */
function answerToolQuestions(page) {
  const dialogs = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const box = page.locator('.monaco-dialog-box').first();
      const title = await box.locator('.dialog-message-text').textContent({ timeout: 200 }).catch(() => undefined);
      if (title === undefined) {
        await sleep(100);
        continue;
      }
      const detail = await box.locator('.dialog-message-detail').textContent({ timeout: 1000 }).catch(() => '');
      dialogs.push({ title, detail });
      // Another dialog is left alone (and reported by the test).
      if (/on the Bot Screen\?$/.test(title)) {
        await box.locator('.dialog-buttons .monaco-button', { hasText: /^(Yes|Continue)$/ }).first().click().catch(() => {});
      }
      await box.waitFor({ state: 'detached', timeout: 10_000 }).catch(() => {});
    }
  })();
  return { dialogs, stop: async () => { running = false; await done; } };
}

const HEIGHT = 640;

test('agent tools through vscode.lm.invokeTool in the real extension host', { timeout: 900_000 }, async () => {
  assert.ok(fs.existsSync(path.join(REPO_ROOT, 'dist', 'extension.js')), 'dist/extension.js exists (npm run package)');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-eht-'));
  const testsFile = path.join(work, 'agentTools.js');
  await bundleExtensionHostTests(testsFile);
  const resultFile = path.join(work, 'result.json');

  // The extension host inherits the server's environment: that is how the test module learns
  // where to write and what to expect.
  const saved = { ...process.env };
  try {
    Object.assign(process.env, {
      BOTSCREEN_EHT_RESULT: resultFile,
      BOTSCREEN_EHT_WIDTH: String(WIDTH),
      BOTSCREEN_EHT_HEIGHT: String(HEIGHT),
    });
    // No VSIX: the window loads this repository as the extension under development.
    await withWindow({
      'botScreen.sandbox.backend': 'docker',
      'botScreen.screen.geometry': `${WIDTH}x${HEIGHT}`,
      'botScreen.idleStopMinutes': 0,
    }, async (server, page) => {
      const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
      const payload = JSON.stringify([
        ['extensionDevelopmentPath', remote(REPO_ROOT)],
        ['extensionTestsPath', remote(testsFile)],
      ]);
      const started = Date.now();
      const questions = answerToolQuestions(page);
      try {
        await page.goto(`${server.url}/?folder=${encodeURIComponent(server.workspace)}&payload=${encodeURIComponent(payload)}`, { timeout: 120_000 });
        await waitFor(() => fs.existsSync(resultFile), Number(process.env.BOTSCREEN_EHT_TIMEOUT_MS) || 180_000, 1000,
          `the result file ${resultFile} (the test module writes it whatever happens; none means it never ran)`);
        const report = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
        console.log(`# extension host VS Code ${report.vscodeVersion}, tests took ${Date.now() - started} ms`);
        for (const r of report.results) {
          console.log(`# ${r.ok ? 'ok' : 'FAILED'} ${r.name} (${r.ms} ms)${r.notes.map((n) => `\n#   ${n}`).join('')}`);
        }
        assert.equal(report.fatal, undefined, `the test module failed: ${report.fatal}`);
        assert.equal(report.results.length, 9, 'every case ran');
        const failed = report.results.filter((r) => !r.ok);
        assert.deepEqual(failed.map((r) => `${r.name}: ${r.error}`), []);
      } finally {
        await questions.stop();
      }

      // The questions VS Code asked before the agent typed, pressed keys and opened a page: each
      // shows what will happen. Nothing else asked (screenshots, pointer actions, waits, and input
      // that is refused anyway).
      const { dialogs } = questions;
      console.log(`# ${dialogs.length} tool questions answered: ${[...new Set(dialogs.map((d) => d.title))].join(' | ')}`);
      // What the questions say is checked in the extension host (each tool's prepareInvocation, test/vscode/agentTools.ts);
      // VS Code 1.99.3 invoked outside a chat ran the tools without showing them here.
      assert.deepEqual(dialogs.filter((d) => !/^(Open a web page|Type|Press keys) on the Bot Screen\?$/.test(d.title)), [], 'no other question');
      assert.ok(!dialogs.some((d) => /nosuchkey|file:\/\/\/etc\/passwd|x{10000}/.test(d.detail)), 'rejected input asks nothing');
    }, {
      vsix: false,
      indicator: false,
      // Where the extension under development keeps its global storage (its lease file) in this
      // server: known only now, so it goes next to the result file rather than into the env.
      beforeOpen: (server) => fs.writeFileSync(path.join(work, 'global-storage'), path.join(server.userDataDir, 'User', 'globalStorage', 'botscreen.bot-screen')),
    });
  } finally {
    for (const key of Object.keys(process.env)) {
      if (!(key in saved)) delete process.env[key];
    }
    Object.assign(process.env, saved);
    fs.rmSync(work, { recursive: true, force: true });
  }
});
