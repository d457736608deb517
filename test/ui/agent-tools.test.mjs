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
import { REPO_ROOT, openWorkbench, startServer, waitFor } from './harness.mjs';
import { removeContainersOf } from './botscreen.mjs';

const WIDTH = 1024;
const HEIGHT = 640;

test('agent tools through vscode.lm.invokeTool in the real extension host', { timeout: 420_000 }, async () => {
  assert.ok(fs.existsSync(path.join(REPO_ROOT, 'dist', 'extension.js')), 'dist/extension.js exists (npm run package)');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-eht-'));
  const testsFile = path.join(work, 'agentTools.js');
  await bundleExtensionHostTests(testsFile);
  const resultFile = path.join(work, 'result.json');

  // The extension host inherits the server's environment: that is how the test module learns
  // where to write and what to expect.
  const saved = { ...process.env };
  let server;
  let workbench;
  try {
    Object.assign(process.env, {
      BOTSCREEN_EHT_RESULT: resultFile,
      BOTSCREEN_EHT_WIDTH: String(WIDTH),
      BOTSCREEN_EHT_HEIGHT: String(HEIGHT),
    });
    server = await startServer({
      userSettings: {
        'botScreen.sandbox.backend': 'docker',
        'botScreen.screen.geometry': `${WIDTH}x${HEIGHT}`,
        'botScreen.idleStopMinutes': 0,
      },
    });
    // Where the extension under development keeps its global storage (its lease file) in this
    // server: known only now, so it goes next to the result file rather than into the env.
    fs.writeFileSync(path.join(work, 'global-storage'), path.join(server.userDataDir, 'User', 'globalStorage', 'botscreen.bot-screen'));
    workbench = await openWorkbench(server);
    const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', remote(REPO_ROOT)],
      ['extensionTestsPath', remote(testsFile)],
    ]);
    const started = Date.now();
    await workbench.page.goto(`${server.url}/?folder=${encodeURIComponent(server.workspace)}&payload=${encodeURIComponent(payload)}`);
    await waitFor(() => fs.existsSync(resultFile), Number(process.env.BOTSCREEN_EHT_TIMEOUT_MS) || 180_000, 1000,
      `the result file ${resultFile} (the test module writes it whatever happens; none means it never ran)`);
    const report = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
    console.log(`# extension host VS Code ${report.vscodeVersion}, tests took ${Date.now() - started} ms`);
    for (const r of report.results) {
      console.log(`# ${r.ok ? 'ok' : 'FAILED'} ${r.name} (${r.ms} ms)${r.notes.map((n) => `\n#   ${n}`).join('')}`);
    }
    assert.equal(report.fatal, undefined, `the test module failed: ${report.fatal}`);
    assert.equal(report.results.length, 8, 'every case ran');
    const failed = report.results.filter((r) => !r.ok);
    assert.deepEqual(failed.map((r) => `${r.name}: ${r.error}`), []);
  } finally {
    for (const key of Object.keys(process.env)) {
      if (!(key in saved)) delete process.env[key];
    }
    Object.assign(process.env, saved);
    await workbench?.close();
    await server?.stop();
    if (server) removeContainersOf(server.workspace);
    fs.rmSync(work, { recursive: true, force: true });
  }
});
