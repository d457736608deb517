// Serves a real VS Code with the packaged Bot Screen, set to start the screen in the Docker
// sandbox (scripts/serve.mjs: connection token, workspace trust on). Reuses the UI harness's
// server and browser plumbing.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  REPO_ROOT, canvasColorCount, findWebviewFrame, openWorkbench, screenshot, waitFor,
} from '../test/ui/harness.mjs';
import { SCREEN_FRAME } from '../test/ui/botscreen.mjs';
import { serveForRun } from './serve.mjs';

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

const { server, url } = await serveForRun({ vsixPath: path.join(REPO_ROOT, 'bot-screen.vsix') });

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

if (!check) {
  console.log(`\nBot Screen is ready. Open this address in a browser on this machine:\n\n  ${url}\n`);
  console.log('The address carries the connection token (it is in no other place but a file only you can read): keep it to yourself.');
  console.log('VS Code asks whether you trust the folder (a throwaway one made for this run): trust it, and Bot Screen starts.');
  console.log('The Screen view (activity bar: Bot Screen) shows the sandbox desktop. Ctrl+C here ends everything.');
  await new Promise(() => {});
}

try {
  const workbench = await openWorkbench(server, { trustTimeoutMs: 30_000 });
  if (!workbench.trustAsked) throw new Error('VS Code did not ask to trust the folder: workspace trust is off');
  const frame = await findWebviewFrame(workbench.page, SCREEN_FRAME, 60_000);
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
