// Reconnect without losing the session, in a real VS Code on a real sandbox container: the
// relay's exec client killed ten times in a row while the screen streams, each time the view is
// back within 2 s on the same Xvnc; the relay blocked for 15 s, the view says no data comes, then
// recovers on the same session; a quiet (static) screen is never taken for a stalled one.
import assert from 'node:assert/strict';
import test from 'node:test';
import { canvasColorCount, screenshot, sh, sleep, waitFor } from './harness.mjs';
import { containersOf, extensionLog, hostProcesses, l10nText, screenStats, startFlood, startScreenPatiently, withWindow } from './botscreen.mjs';

const RECONNECTING = l10nText('Reconnecting… (attempt {0})');
const STALLED = l10nText('No data for {0} s');

/** The relays of this machine's extension hosts: `docker exec -i … python3 -c <relay source>`. */
function relayClients(container) {
  return hostProcesses('Bot Screen relay: copies stdin')
    .filter((line) => / exec /.test(line) && line.includes(container))
    .map((line) => Number(line.split(' ')[0]));
}

/** The pid of the container's Xvnc, read inside the container. */
function xvncPid(container) {
  return sh('docker', ['exec', container, 'pgrep', '-x', 'Xvnc']).trim();
}

/** Records every text and state the view's badge shows, from now on, inside the page. */
async function recordBadge(frame) {
  await frame.evaluate(() => {
    const badge = document.getElementById('badge');
    const seen = (window.__badgeSeen = []);
    const note = () => seen.push({ text: badge.textContent, state: badge.dataset.state, at: Date.now() });
    new MutationObserver(note).observe(badge, { childList: true, characterData: true, subtree: true, attributes: true });
  });
}

const badgeSeen = (frame) => frame.evaluate(() => window.__badgeSeen.splice(0));

test('a killed relay reconnects within 2 s to the same desktop, ten times; a blocked one shows it and recovers', { timeout: 480_000 }, async () => {
  // The flight recorder's relay looks like the view's (same argv): off here, so the one relay is the view's.
  await withWindow({ 'botScreen.sandbox.backend': 'docker', 'botScreen.recorder.enabled': false }, async (server, page) => {
   try {
    const frame = await startScreenPatiently(page);
    await waitFor(async () => (await canvasColorCount(frame, { minWidth: 1280 })).colors >= 10, 180_000, 250, 'the desktop').catch(async (err) => {
      throw new Error(`${err.message}; the view: ${JSON.stringify(await screenStats(frame))}, badge "${await frame.locator('#badge').textContent()}"`);
    });
    const [container] = containersOf(server.workspace);
    const xvnc = xvncPid(container);
    assert.match(xvnc, /^\d+$/, 'one Xvnc runs in the sandbox');
    await recordBadge(frame);

    // A static desktop sends nothing for seconds: the pings keep it from looking stalled.
    await sleep(9_000);
    const quiet = await badgeSeen(frame);
    assert.ok(!quiet.some((b) => b.state === 'stalled'), `a quiet screen was shown as stalled: ${JSON.stringify(quiet)}`);
    assert.equal((await screenStats(frame)).connection, 'live');

    startFlood(container);
    await waitFor(async () => {
      const before = await screenStats(frame);
      await sleep(500);
      return (await screenStats(frame)).bytesIn - before.bytesIn > 20_000;
    }, 30_000, 0, 'the screen to stream');

    const times = [];
    for (let i = 1; i <= 10; i++) {
      const before = await screenStats(frame);
      const relays = await waitFor(() => {
        const found = relayClients(container);
        return found.length === 1 ? found : undefined;
      }, 10_000, 100, 'exactly one relay exec client of this view');
      const killedAt = Date.now();
      process.kill(relays[0], 'SIGKILL');
      const after = await waitFor(async () => {
        const s = await screenStats(frame);
        return s.connects > before.connects && s.firstFrameAt > 0 && s.connection === 'live' ? s : undefined;
      }, 15_000, 50, `reconnect ${i}`);
      const ms = after.firstFrameAt - killedAt;
      times.push(ms);
      assert.equal(after.connects, before.connects + 1, 'one new session per kill');
      assert.ok(ms < 2000, `reconnect ${i}: first frame of the new session ${ms} ms after the kill (limit 2000)`);
      assert.equal(xvncPid(container), xvnc, `reconnect ${i}: the same Xvnc (the desktop was not restarted)`);
      assert.equal((await screenStats(frame)).hostState, 'running');
    }
    console.log(`# reconnect after a killed relay, kill to first frame (ms): ${times.join(', ')}; max ${Math.max(...times)}`);
    const during = await badgeSeen(frame);
    assert.ok(during.some((b) => b.state === 'reconnecting' && b.text === RECONNECTING.replace('{0}', '1')),
      `the badge said "${RECONNECTING.replace('{0}', '1')}": ${JSON.stringify(during.slice(-6))}`);
    assert.ok(!during.some((b) => b.state === 'reconnecting' && b.text !== RECONNECTING.replace('{0}', '1')),
      'every kill of a session that drew is attempt 1: the backoff resets');

    // Block the relay (its exec client stopped) for 15 s.
    const [relay] = relayClients(container);
    const session = await screenStats(frame);
    process.kill(relay, 'SIGSTOP');
    const stoppedAt = Date.now();
    let stalledText;
    try {
      stalledText = await waitFor(async () => {
        const badge = frame.locator('#badge');
        return (await badge.getAttribute('data-state')) === 'stalled' ? badge.textContent() : undefined;
      }, 12_000, 200, 'the view to say no data arrives');
      await screenshot(page, 'ui-reconnect-stalled');
      await sleep(Math.max(0, 15_000 - (Date.now() - stoppedAt)));
    } finally {
      process.kill(relay, 'SIGCONT');
    }
    const stalled = await badgeSeen(frame);
    const longest = Math.max(...stalled.filter((b) => b.state === 'stalled').map((b) => Number(/\d+/.exec(b.text)?.[0] ?? 0)));
    console.log(`# blocked relay: "${stalledText}" first, up to ${longest} s without data`);
    assert.match(stalledText, new RegExp(`^${STALLED.replace('{0}', '\\d+')}$`));
    assert.ok(longest >= 10, `the stall counted up while blocked (up to ${longest} s)`);
    const resumedAt = Date.now();
    await waitFor(async () => (await frame.locator('#badge').getAttribute('data-state')) === 'live'
      && (await screenStats(frame)).lastFrameAt > resumedAt, 10_000, 100, 'the view to recover after the block');
    const recovered = await screenStats(frame);
    assert.equal(recovered.connects, session.connects, 'the same session carried on after the block');
    assert.equal(xvncPid(container), xvnc, 'the same Xvnc after the block');
    await screenshot(page, 'ui-reconnect-recovered');
   } catch (err) {
    console.log(`# the extension's log:\n${extensionLog(server).replace(/^/gm, '# ')}`);
    throw err;
   }
  }, { failureShot: 'ui-reconnect-failed' });
});
