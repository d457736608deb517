// Serves a real VS Code with the packaged Bot Screen and a workspace whose settings start the
// screen in the Docker sandbox. Reuses the UI harness's server and browser plumbing.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  REPO_ROOT, canvasColorCount, findWebviewFrame, openWorkbench, screenshot, startServer, waitFor,
} from '../test/ui/harness.mjs';

const check = process.argv.includes('--check');
const docker = (...args) => {
  try {
    return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
};
const managed = () => docker('ps', '-aq', '--no-trunc', '--filter', 'label=dev.botscreen.managed=1').split('\n').filter(Boolean);
const before = new Set(managed());

const server = await startServer({
  vsixPath: path.join(REPO_ROOT, 'bot-screen.vsix'),
  userSettings: { 'security.workspace.trust.enabled': false },
});
await fs.mkdir(path.join(server.workspace, '.vscode'), { recursive: true });
await fs.writeFile(
  path.join(server.workspace, '.vscode', 'settings.json'),
  JSON.stringify({ 'botScreen.sandbox.backend': 'docker', 'botScreen.autoStart': true }, null, 2),
);

let ending = false;
async function end(code) {
  if (ending) return;
  ending = true;
  await server.stop();
  // The sandbox containers this run created belong to its throwaway workspace: remove them.
  const ours = managed().filter((id) => !before.has(id));
  if (ours.length > 0) docker('rm', '-f', ...ours);
  process.exit(code);
}
process.on('SIGINT', () => void end(0));
process.on('SIGTERM', () => void end(0));

const url = `${server.url}/?folder=${encodeURIComponent(server.workspace)}`;
if (!check) {
  console.log(`\nBot Screen is ready. Open this address in a browser on this machine:\n\n  ${url}\n`);
  console.log('The Screen view (activity bar: Bot Screen) shows the sandbox desktop. Ctrl+C here ends everything.');
  await new Promise(() => {});
}

try {
  const workbench = await openWorkbench(server);
  const frame = await findWebviewFrame(workbench.page, 'botScreen', 60_000);
  const canvas = await waitFor(async () => {
    const c = await canvasColorCount(frame, { minWidth: 640 });
    return c.colors >= 10 ? c : undefined;
  }, 60_000, 250, 'the sandbox desktop in the Screen view');
  const file = await screenshot(workbench.page, 'run-check');
  console.log(`desktop ${canvas.width}x${canvas.height} with ${canvas.colors} colours shown; screenshot ${file}`);
  await workbench.close();
  await end(0);
} catch (err) {
  console.error(String(err?.stack ?? err));
  await end(1);
}
