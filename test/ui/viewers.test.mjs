// Several viewers at once in a real VS Code on a real sandbox: the Screen view, the editor panel
// and an external VNC client (a real RFB connection to the external-viewer port) watch together;
// each webview shows how many viewers are connected and who holds control, and when control
// moves between them (and back to the agent when the external holder disconnects, or when the
// palette's Hand Back, offered while the external viewer holds, is run) every webview shows the
// new holder within 500 ms.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import test from 'node:test';
import { canvasColorCount, runCommand, screenshot, waitFor } from './harness.mjs';
import { TITLES, extensionLog, l10nText, screenStats, startScreenPatiently, viewerFrame, withWindow, workspaceKey } from './botscreen.mjs';

const YOU = l10nText('You have control: your keyboard and mouse reach the screen; the agent waits.');
const OTHER = l10nText('Another viewer has control: this view is view-only.');
const AGENT = l10nText('The agent has control: this view is view-only.');
const TAKE_EXTERNAL = l10nText('Take control for the external viewer');
const LIMIT_MS = 500;

const drawn = async (frame) => (await canvasColorCount(frame, { minWidth: 1280 }).catch(() => ({ colors: 0 }))).colors >= 10;

/** A minimal RFB 3.8 client: handshake (security None, shared), then it reads and drops what comes. */
async function rfbClient(port) {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = Buffer.alloc(0);
  let waiting;
  const take = () => {
    if (waiting && buffer.length >= waiting.n) {
      const { n, resolve } = waiting;
      waiting = undefined;
      const out = buffer.subarray(0, n);
      buffer = buffer.subarray(n);
      resolve(out);
    }
  };
  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    take();
  });
  const closed = new Promise((resolve) => socket.once('close', resolve));
  const read = (n) => Promise.race([
    new Promise((resolve) => {
      waiting = { n, resolve };
      take();
    }),
    closed.then(() => { throw new Error('the external viewer port closed the connection'); }),
  ]);
  assert.match((await read(12)).toString(), /^RFB 003\.00\d\n$/);
  socket.write('RFB 003.008\n');
  const types = await read((await read(1))[0]);
  assert.ok(types.includes(1), 'security type None offered');
  socket.write(Buffer.from([1]));
  assert.equal((await read(4)).readUInt32BE(0), 0, 'security result OK');
  socket.write(Buffer.from([1])); // ClientInit: shared
  const init = await read(24);
  await read(init.readUInt32BE(20));
  socket.removeAllListeners('data');
  socket.on('data', () => undefined);
  return { socket, width: init.readUInt16BE(0), height: init.readUInt16BE(2), closed };
}

/** Records, inside the page, every text the control bar shows, with its Date.now(). */
const recordControl = (frame) => frame.evaluate(() => {
  const text = document.getElementById('control-text');
  const seen = (window.__controlSeen = [{ text: text.textContent, at: Date.now() }]);
  new MutationObserver(() => seen.push({ text: text.textContent, at: Date.now() }))
    .observe(text, { childList: true, characterData: true, subtree: true });
});

/** When `frame` first showed `text` at or after `since` (0 if it has not). */
const shownAt = (frame, text, since) => frame.evaluate(({ text, since }) => {
  const seen = window.__controlSeen;
  const last = seen.at(-1);
  if (last.text !== text) return 0;
  // The moment the current text appeared (it may have been shown before `since` already).
  let at = last.at;
  for (let i = seen.length - 2; i >= 0 && seen[i].text === text; i--) at = seen[i].at;
  return Math.max(at, since);
}, { text, since });

/**
 * Waits until each frame shows its expected holder; returns how long after the lease changed
 * (its `since`, written by the transition itself) each did.
 */
async function holders(leaseFile, expected, what) {
  return waitFor(async () => {
    const since = Date.parse(JSON.parse(fs.readFileSync(leaseFile, 'utf8')).since);
    const times = [];
    for (const [frame, text] of expected) {
      const at = await shownAt(frame, text, since);
      if (!at) return undefined;
      times.push(at - since);
    }
    return times;
  }, 10_000, 50, what).catch(async (err) => {
    const shown = await Promise.all(expected.map(([frame]) => frame.locator('#control-text').textContent()));
    throw new Error(`${err.message}; shown: ${JSON.stringify(shown)}`);
  });
}

const viewersShown = (frame) => frame.locator('#viewers').getAttribute('data-count').then(Number);

async function countIs(frames, n, what) {
  await waitFor(async () => {
    for (const frame of frames) if ((await viewersShown(frame)) !== n) return false;
    return true;
  }, 15_000, 100, what).catch(async (err) => {
    throw new Error(`${err.message}; shown: ${JSON.stringify(await Promise.all(frames.map(viewersShown)))}`);
  });
}

/** The port of the external-viewer listener, from the notification the command shows. */
async function externalPort(page) {
  await runCommand(page, TITLES.connectExternalViewer, { timeoutMs: 20_000 });
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: TAKE_EXTERNAL }).last();
  await toast.waitFor({ timeout: 20_000 });
  const text = await toast.textContent();
  const port = /the port (\d+)/.exec(text)?.[1] ?? /127\.0\.0\.1:(\d+)/.exec(text)?.[1];
  assert.ok(port, `a port in "${text}"`);
  return { port: Number(port), toast };
}

test('the Screen view, an editor panel and an external viewer watch at once; each shows the count and the holder within 500 ms', { timeout: 480_000 }, async () => {
  await withWindow({ 'botScreen.sandbox.backend': 'docker' }, async (server, page) => {
   try {
    await startScreenPatiently(page);
    const view = await viewerFrame(page, false);
    await waitFor(() => drawn(view), 180_000, 250, 'the Screen view to draw the desktop');
    await runCommand(page, TITLES.openInEditor);
    const panel = await viewerFrame(page, true);
    await waitFor(() => drawn(panel), 60_000, 250, 'the panel to draw the desktop');
    const webviews = [view, panel];
    await countIs(webviews, 2, 'both webviews to count 2 viewers');
    assert.equal(await view.locator('#viewers').textContent(), l10nText('{0} viewers connected').replace('{0}', '2'));

    const { port, toast } = await externalPort(page);
    const external = await rfbClient(port);
    assert.equal(`${external.width}x${external.height}`, '1280x800', 'the external client reached the screen');
    await countIs(webviews, 3, 'both webviews to count the external viewer too');
    await toast.locator('.codicon-notifications-clear, .codicon-close').first().click().catch(() => {});
    for (const frame of webviews) await recordControl(frame);
    assert.equal(await view.locator('#control-text').textContent(), AGENT);
    assert.equal(await panel.locator('#control-text').textContent(), AGENT);
    const times = {};
    const leaseFile = path.join(server.userDataDir, 'User', 'globalStorage', 'botscreen.bot-screen', 'leases', `lease-${workspaceKey(server.workspace)}.json`);

    // The Screen view takes control: the panel turns view-only at once.
    await view.locator('#control-button').click();
    times.view = await holders(leaseFile, [[view, YOU], [panel, OTHER]], 'the Screen view to hold control');
    assert.equal((await screenStats(panel)).inControl, false);

    // The panel takes it from the Screen view.
    await panel.locator('#control-button').click();
    times.panel = await holders(leaseFile, [[panel, YOU], [view, OTHER]], 'the panel to hold control');
    assert.equal((await screenStats(view)).inControl, false);

    // The external viewer takes it (the command again, then its notification's button).
    const again = await externalPort(page);
    assert.equal(again.port, port, 'the same listener');
    await again.toast.getByRole('button', { name: TAKE_EXTERNAL }).click();
    times.external = await holders(leaseFile, [[panel, OTHER], [view, OTHER]], 'the external viewer to hold control');
    assert.equal((await screenStats(panel)).inControl, false);
    assert.equal((await screenStats(view)).inControl, false);
    await screenshot(page, 'ui-viewers-external-holds');

    // The palette's Hand Back is offered while this window's external viewer holds control, and
    // gives control back to the agent.
    await runCommand(page, TITLES.handBack);
    times.handBack = await holders(leaseFile, [[panel, AGENT], [view, AGENT]], 'the palette\'s Hand Back to give control to the agent');

    // The external viewer takes control once more.
    const third = await externalPort(page);
    await third.toast.getByRole('button', { name: TAKE_EXTERNAL }).click();
    await holders(leaseFile, [[panel, OTHER], [view, OTHER]], 'the external viewer to hold control again');

    // The external viewer, holding control, disconnects: control goes back to the agent, everywhere.
    external.socket.destroy();
    times.agent = await holders(leaseFile, [[panel, AGENT], [view, AGENT]], 'control back with the agent');
    console.log(`# holder shown after the change (ms, [first, second] webview): ${JSON.stringify(times)}`);
    for (const [who, [a, b]] of Object.entries(times)) {
      assert.ok(a <= LIMIT_MS && b <= LIMIT_MS, `control to ${who}: shown after ${a} and ${b} ms (limit ${LIMIT_MS})`);
    }

    await countIs(webviews, 2, 'the external viewer no longer counted once it closed');
    await screenshot(page, 'ui-viewers-two');
   } catch (err) {
    console.log(`# the extension's log:\n${extensionLog(server).replace(/^/gm, '# ')}`);
    throw err;
   }
  }, { failureShot: 'ui-viewers-failed' });
});
