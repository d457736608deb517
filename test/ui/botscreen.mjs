// What the UI tests need to know about Bot Screen itself: the key it gives a workspace (which
// names its container and runtime dir), and that container.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, openWorkbench, startServer } from './harness.mjs';

/** Same as src/settings.ts workspaceKey() for a folder opened in the VS Code Server. */
export function workspaceKey(folder) {
  return createHash('sha256').update(`file://${folder}`).digest('hex').slice(0, 12);
}

export function sh(command, args) {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    return String(err.stdout ?? '');
  }
}

/** Ids of the sandbox containers Bot Screen made for this workspace. */
export function containersOf(folder) {
  return sh('docker', ['ps', '-aq', '--no-trunc', '--filter', `label=dev.botscreen.workspace=${workspaceKey(folder)}`])
    .split('\n').filter(Boolean);
}

/** Removes only this workspace's containers: provably ours (labels) and throwaway (temp workspace). */
export function removeContainersOf(folder) {
  const ids = containersOf(folder);
  if (ids.length > 0) sh('docker', ['rm', '-f', ...ids]);
}

/** Processes of this machine itself (pgrep also sees every container's) matching a pattern. */
export function hostProcesses(pattern) {
  const ours = fs.readlinkSync('/proc/self/ns/pid');
  return sh('pgrep', ['-a', '-f', pattern]).split('\n').filter(Boolean).filter((line) => {
    try {
      return fs.readlinkSync(`/proc/${line.split(' ')[0]}/ns/pid`) === ours;
    } catch {
      return false;
    }
  });
}

export const VSIX = process.env.BOTSCREEN_VSIX || path.join(REPO_ROOT, 'bot-screen.vsix');

/**
 * A VS Code window with Bot Screen installed and active (its placement indicator shows, so its
 * commands are in the palette); runs `body(server, page)`, then ends the window and the server
 * and removes this workspace's sandbox containers.
 */
export async function withWindow(userSettings, body) {
  // The indicator shows in every window only when asked to (by default only where a screen ran).
  const server = await startServer({ vsixPath: VSIX, userSettings: { 'botScreen.statusBar.visible': 'always', ...userSettings } });
  let workbench;
  try {
    workbench = await openWorkbench(server);
    await workbench.page.locator('.statusbar-item', { hasText: 'Screen:' }).first().waitFor({ timeout: 60_000 });
    await body(server, workbench.page);
  } finally {
    await workbench?.close();
    await server.stop();
    removeContainersOf(server.workspace);
  }
}
