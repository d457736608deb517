// For contributors with internet access: the extension-host suite (test/vscode/agentTools.ts) in a
// desktop VS Code that @vscode/test-electron downloads. These machines cannot download it, so CI
// runs the same module in VS Code Server 1.99.3 instead (test/ui/agent-tools.test.mjs).
// Usage: node scripts/test-electron.mjs   (after `npm run package` and the sandbox image build)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTests } from '@vscode/test-electron';
import { bundleExtensionHostTests } from '../test/vscode/bundle.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-electron-'));
const testsFile = path.join(work, 'agentTools.js');
const userData = path.join(work, 'user-data');
const workspace = path.join(work, 'workspace');
fs.mkdirSync(workspace);
await bundleExtensionHostTests(testsFile);
// The same contract as the VS Code Server driver: where to write, what size to expect, and where
// the extension keeps its global storage.
const resultFile = path.join(work, 'result.json');
fs.writeFileSync(path.join(work, 'global-storage'), path.join(userData, 'User', 'globalStorage', 'botscreen.bot-screen'));
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({ 'botScreen.screen.geometry': '1024x640', 'botScreen.idleStopMinutes': 0 }));
await runTests({
  extensionDevelopmentPath: root,
  extensionTestsPath: testsFile,
  launchArgs: [workspace, '--user-data-dir', userData, '--disable-extensions'],
  extensionTestsEnv: { BOTSCREEN_EHT_RESULT: resultFile, BOTSCREEN_EHT_WIDTH: '1024', BOTSCREEN_EHT_HEIGHT: '640' },
}).catch(() => undefined); // the exit status says nothing; the result file does
if (!fs.existsSync(resultFile)) {
  console.error(`no result file ${resultFile}: the test module never ran`);
  process.exit(1);
}
const report = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
const failed = report.results.filter((r) => !r.ok);
for (const r of report.results) console.log(`${r.ok ? 'ok' : 'FAILED'} ${r.name}${r.ok ? '' : `: ${r.error}`}`);
console.log(`${report.results.length - failed.length} passed, ${failed.length} failed`);
process.exit(report.fatal || failed.length > 0 ? 1 : 0);
