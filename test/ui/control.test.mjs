// Take control / Hand back in a real VS Code: a person's typing reaches the sandbox's terminal
// only while their view holds control; with the agent in control the view is view-only.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SCREEN_FRAME, canvasColorCount, findWebviewFrame, runCommand, screenStats, screenshot, waitFor } from './harness.mjs';
import { containersOf, hostProcesses, sh, withWindow, workspaceKey } from './botscreen.mjs';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A maximised xfce4-terminal on the sandbox's screen, so typed keys land in a shell. */
function openTerminal(container) {
  const env = sh('docker', ['exec', '-u', 'pn', container, 'sh', '-c', 'cat /tmp/botscreen-1000/*/env'])
    .split('\n').filter((line) => /^(DISPLAY|XAUTHORITY|DBUS_SESSION_BUS_ADDRESS)=/.test(line));
  return spawn('docker', ['exec', '-u', 'pn', ...env.flatMap((v) => ['-e', v]), container,
    'xfce4-terminal', '--disable-server', '--maximize', '--working-directory=/tmp'], { stdio: 'ignore' });
}

const fileIn = (container, file) => sh('docker', ['exec', container, 'cat', file]).trim();

test('typing reaches the sandbox only while this view holds control', { timeout: 240_000 }, async () => {
  await withWindow({}, async (server, page) => {
    await runCommand(page, 'Bot Screen: Start Screen');
    const frame = await findWebviewFrame(page, SCREEN_FRAME, 60_000);
    await waitFor(async () => (await canvasColorCount(frame, { minWidth: 1280 })).colors >= 10, 30_000, 200, 'the desktop');
    const [container] = containersOf(server.workspace);
    openTerminal(container);
    await waitFor(() => sh('docker', ['exec', container, 'pgrep', '-f', 'xfce4-terminal']).trim() !== '', 15_000, 200, 'the terminal');
    await sleep(2_500); // the window maps and takes the focus
    const probe = () => screenStats(frame);
    const canvas = frame.locator('#screen canvas').first();

    // The agent holds control: the view is view-only and says so.
    assert.match(await frame.locator('#control-text').textContent(), /agent has control/);
    await canvas.click();
    await page.keyboard.type('echo agent > agent-held\n', { delay: 20 });
    await sleep(2_000);
    assert.equal(fileIn(container, '/tmp/agent-held'), '', 'typing with the agent in control reached the sandbox');

    await frame.locator('#control-button').click();
    await waitFor(async () => (await probe()).inControl, 10_000, 100, 'this view to hold control');
    assert.match(await frame.locator('#control-text').textContent(), /You have control/);
    await screenshot(page, 'ui-control-taken');
    await canvas.click();
    await page.keyboard.type('echo typed-by-person > person-typed\n', { delay: 20 });
    await waitFor(() => fileIn(container, '/tmp/person-typed') === 'typed-by-person', 15_000, 200, 'the typed command to run in the sandbox');

    await frame.locator('#control-button').click();
    await waitFor(async () => !(await probe()).inControl, 10_000, 100, 'control to go back to the agent');
    await canvas.click();
    await page.keyboard.type('echo again > after-hand-back\n', { delay: 20 });
    await sleep(2_000);
    assert.equal(fileIn(container, '/tmp/after-hand-back'), '', 'typing after Hand back reached the sandbox');
  });
});

test('Open Sandbox Terminal opens a shell inside the sandbox, as pn, on the screen\'s display', { timeout: 240_000 }, async () => {
  await withWindow({ 'terminal.integrated.gpuAcceleration': 'off' }, async (server, page) => {
    await runCommand(page, 'Bot Screen: Start Screen');
    const frame = await findWebviewFrame(page, SCREEN_FRAME, 60_000);
    await waitFor(async () => (await screenStats(frame)).hostState === 'running', 30_000, 200, 'the screen');
    await runCommand(page, 'Bot Screen: Open Sandbox Terminal');
    const terminal = page.locator('.part.panel .xterm').first();
    await terminal.waitFor({ timeout: 30_000 });
    await sleep(2_000);
    await terminal.click();
    await page.keyboard.type('echo "$DISPLAY $(id -un)" > /tmp/terminal-probe\n', { delay: 10 });
    const [container] = containersOf(server.workspace);
    const probe = await waitFor(() => fileIn(container, '/tmp/terminal-probe'), 20_000, 200, 'the shell in the sandbox to write its probe');
    assert.match(probe, /^:\d+ pn$/);
    await screenshot(page, 'ui-sandbox-terminal');
  });
});

/** The editor panel's frame: the one whose actions do not offer "Open in Editor". */
async function panelFrame(page) {
  return waitFor(async () => {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      const inPanel = await frame.evaluate((stats) => Boolean(document.querySelector(stats)?.dataset.hostState)
        && !document.querySelector('#actions [data-action="openInEditor"]'), SCREEN_FRAME).catch(() => false);
      if (inPanel) return frame;
    }
    return undefined;
  }, 30_000, 250, 'the editor panel frame');
}

test('a dropped connection keeps control; closing the holder\'s panel hands it back', { timeout: 240_000 }, async () => {
  await withWindow({}, async (server, page) => {
    await runCommand(page, 'Bot Screen: Start Screen');
    await findWebviewFrame(page, SCREEN_FRAME, 60_000);
    await runCommand(page, 'Bot Screen: Open Screen in Editor');
    const frame = await panelFrame(page);
    const probe = () => screenStats(frame);
    await waitFor(async () => (await probe()).connection === 'live', 30_000, 200, 'the panel to be live');
    await frame.locator('#control-button').click();
    await waitFor(async () => (await probe()).inControl, 10_000, 100, 'the panel to hold control');
    const leaseFile = path.join(server.userDataDir, 'User', 'globalStorage', 'botscreen.bot-screen', 'leases', `lease-${workspaceKey(server.workspace)}.json`);
    const holder = () => JSON.parse(fs.readFileSync(leaseFile, 'utf8')).holder;
    assert.equal(holder(), 'human');

    // Drop the connections (the panel's and the side bar's): kill their relay clients here.
    const relays = hostProcesses(`docker exec -i -u pn .* python3 -c # Bot Screen relay.*/${workspaceKey(server.workspace)}/rfb\\.sock`);
    assert.ok(relays.length >= 1, 'the panel has a relay');
    for (const line of relays) sh('kill', ['-9', line.split(' ')[0]]);
    await waitFor(async () => (await probe()).connects >= 2 && (await probe()).connection === 'live', 20_000, 200, 'the panel to reconnect');
    assert.equal(holder(), 'human', 'a dropped connection does not hand back');
    assert.equal((await probe()).inControl, true);

    await runCommand(page, 'View: Close Editor');
    await waitFor(() => holder() === 'agent', 10_000, 200, 'closing the holder\'s panel to hand back');
  });
});

test('with the screen on this machine, new integrated terminals get its DISPLAY', { timeout: 240_000 }, async () => {
  await withWindow({ 'botScreen.placement': 'gateway', 'terminal.integrated.gpuAcceleration': 'off' }, async (server, page) => {
    const probeFile = path.join(server.dir, 'display-probe');
    await runCommand(page, 'Bot Screen: Start Screen');
    const frame = await findWebviewFrame(page, SCREEN_FRAME, 60_000);
    await waitFor(async () => (await screenStats(frame)).hostState === 'running', 30_000, 200, 'the screen');
    await runCommand(page, 'Terminal: Create New Terminal');
    const terminal = page.locator('.part.panel .xterm').first();
    await terminal.waitFor({ timeout: 30_000 });
    await sleep(2_000);
    await terminal.click();
    await page.keyboard.type(`echo "$DISPLAY" > ${probeFile}\n`, { delay: 10 });
    const display = await waitFor(() => (fs.existsSync(probeFile) ? fs.readFileSync(probeFile, 'utf8').trim() : ''), 20_000, 200, 'the terminal to write DISPLAY');
    const xvnc = hostProcesses(`^Xvnc ${display} .*/${workspaceKey(server.workspace)}/rfb\\.sock`);
    assert.equal(xvnc.length, 1, `DISPLAY ${display} is this window's screen`);
    await runCommand(page, 'Bot Screen: Stop Screen');
  });
});
