// The Screen viewers in a real VS Code (VS Code Server 1.99.3 web workbench, Debian's Chromium):
// a hidden retained viewer must not stream, the keyboard the canvas captures must be given back,
// the bytes go over the direct channel (refusing strangers) or, failing that, postMessage,
// and a sandbox removed under a live screen must be reported as gone. Each test opens its own
// server and window on a real container of the desktop image, and removes what it created.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import test from 'node:test';
import { canvasColorCount, runCommand, screenshot, sh, sleep, waitFor } from './harness.mjs';
import { PANEL_TITLE, SCREEN_FRAME, TITLES, containersOf, screenStats, startFlood, withWindow } from './botscreen.mjs';

const WIDTH = 1280;
const HEIGHT = 800;
/**
 * How much the Screen view's renderer may grow over a minute of flood (longer until at least
 * FLOOD_MIN_MB arrived).
 * Before webview/imageDecode.ts it grew 131 MiB in this window (617 → 748 MiB over 52 MB, about
 * 2.5 MiB per MB drawn, so at least 75 MiB over FLOOD_MIN_MB); after it, 3 MiB (304 → 306 MiB
 * over 93 MB).
 */
const RENDERER_GROWTH_MIB = 40;
const FLOOD_MIN_MB = 30;
const GONE_SENTENCE = 'The sandbox hosting this screen is gone; start it again.';

/** A window with Bot Screen installed, on the docker backend (see withWindow). */
const withDockerWindow = (body) => withWindow({ 'botScreen.sandbox.backend': 'docker' }, body);

/** The one sandbox container this window runs its screen in. */
async function ourContainer(server) {
  const ids = await waitFor(() => {
    const found = containersOf(server.workspace);
    return found.length === 1 ? found : undefined;
  }, 10_000, 250, 'exactly one sandbox container of this window').catch((err) => {
    throw new Error(`${err.message}; found ${JSON.stringify(containersOf(server.workspace))}`);
  });
  return ids[0];
}

/**
 * The frame of one Screen viewer, picked by content: both the sidebar view and the editor panel
 * report screen stats; only the sidebar offers "Open in Editor" among its actions.
 */
async function viewerFrame(page, kind, timeoutMs = 30_000) {
  return waitFor(async () => {
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      const info = await screenStats(frame).then(async (stats) => (stats && stats.hostState
        ? { inSidebar: await frame.evaluate(() => Boolean(document.querySelector('#actions [data-action="openInEditor"]'))) }
        : undefined)).catch(() => undefined);
      if (info && info.inSidebar === (kind === 'view')) return frame;
    }
    return undefined;
  }, timeoutMs, 250, `the ${kind === 'view' ? 'Screen view' : 'editor panel'} frame`);
}

/**
 * Waits until `frame` shows a desktop (a WIDTHxHEIGHT canvas with many colours). Generous: on a
 * loaded 2-core machine a new sandbox's Xfce takes close to a minute to paint.
 */
async function waitForDesktop(frame, what, timeoutMs = 120_000) {
  return waitFor(async () => {
    const c = await canvasColorCount(frame, { minWidth: WIDTH });
    return c.width === WIDTH && c.height === HEIGHT && c.colors >= 10 ? c : undefined;
  }, timeoutMs, 250, `${what}: a ${WIDTH}x${HEIGHT} canvas with a desktop on it`);
}

/** Runs "Bot Screen: Start Screen" from the palette; keeps a screenshot when that fails. */
async function startScreen(page) {
  try {
    await runCommand(page, TITLES.start, { timeoutMs: 20_000 });
  } catch (err) {
    await screenshot(page, 'ui-viewer-start-failed').catch(() => {});
    throw err;
  }
}

const viewText = (frame, id) => frame.locator(`#${id}`).textContent();

/** Xvnc processes in this machine's own pid namespace (a container's Xvnc is in another). */
function hostXvnc() {
  const ownNs = fs.readlinkSync('/proc/self/ns/pid');
  return sh('pgrep', ['-x', 'Xvnc']).split('\n').filter(Boolean).map(Number).filter((pid) => {
    try { return fs.readlinkSync(`/proc/${pid}/ns/pid`) === ownNs; } catch { return false; }
  }).map((pid) => {
    let cmdline = '';
    try { cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '); } catch { /* gone */ }
    return { pid, cmdline };
  });
}

/** The processes started by this test process's browser (Playwright spawns it as our child): pid → CPU ticks. */
function browserProcessTicks() {
  const stat = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      stat.set(Number(d), { comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch { /* gone */ }
  }
  const ours = new Set([...stat].filter(([, s]) => s.ppid === process.pid && /chrom/.test(s.comm)).map(([pid]) => pid));
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, s] of stat) if (!ours.has(pid) && ours.has(s.ppid)) { ours.add(pid); grew = true; }
  }
  return new Map([...ours].map((pid) => [pid, stat.get(pid).ticks]));
}

/**
 * The renderer process that runs `frame`: of the browser's processes, the one whose CPU time
 * jumps while the frame spins for 300 ms (Chromium tells no pid per frame).
 */
async function rendererOf(frame) {
  const a = browserProcessTicks();
  await frame.evaluate(() => { const t = performance.now(); while (performance.now() - t < 300) { /* spin */ } });
  let best;
  for (const [pid, ticks] of browserProcessTicks()) if (a.has(pid) && (!best || ticks - a.get(pid) > best.d)) best = { pid, d: ticks - a.get(pid) };
  return best.pid;
}

const rssMiB = (pid) => Number(fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;

test('a hidden Screen panel receives no bytes, and shows the screen again quickly when revealed', { timeout: 420_000 }, async () => {
  await withDockerWindow(async (server, page) => {
    await startScreen(page);
    const view = await viewerFrame(page, 'view');
    await waitForDesktop(view, 'Screen view');
    const container = await ourContainer(server);

    // Only the panel should be on screen: close the side bar (hiding the Screen view), then open
    // the panel in the (empty) editor area.
    await runCommand(page, 'View: Close Primary Side Bar');
    await runCommand(page, TITLES.openInEditor);
    const panel = await viewerFrame(page, 'panel');
    assert.notEqual(panel, view, 'the panel is a frame of its own');
    await waitForDesktop(panel, 'editor panel');
    const tab = page.locator('.tabs-container .tab', { hasText: PANEL_TITLE }).first();
    await tab.waitFor({ state: 'visible', timeout: 10_000 });

    startFlood(container);
    // The visible panel streams.
    const visibleStart = await screenStats(panel);
    const viewStart = await screenStats(view);
    await waitFor(async () => (await screenStats(panel)).bytesIn - visibleStart.bytesIn > 200_000, 20_000, 200,
      'the visible panel to receive the flood');
    const t0 = Date.now();
    const v0 = await screenStats(panel);
    await sleep(2000);
    const v1 = await screenStats(panel);
    const visibleRate = (v1.bytesIn - v0.bytesIn) / ((Date.now() - t0) / 1000);
    console.log(`# visible panel: ${(visibleRate / 1e6).toFixed(2)} MB/s, ${((v1.framesDrawn - v0.framesDrawn) / 2).toFixed(1)} frames/s`);
    assert.ok(v1.bytesIn > v0.bytesIn, 'the visible panel receives bytes');
    await screenshot(page, 'ui-viewer-panel-flood');

    // Hide the panel: a new untitled file opens in the same editor group, on top of it.
    await runCommand(page, 'File: New Untitled Text File');
    await waitFor(async () => !/\bactive\b/.test((await tab.getAttribute('class')) || ''), 10_000, 100,
      'the Bot Screen tab to be inactive');
    await sleep(1500);
    const h0 = await screenStats(panel);
    const hiddenAt = Date.now();
    let hiddenMax = 0;
    while (Date.now() - hiddenAt < 5500) {
      await sleep(500);
      hiddenMax = Math.max(hiddenMax, (await screenStats(panel)).bytesIn - h0.bytesIn);
    }
    const h1 = await screenStats(panel);
    const viewEnd = await screenStats(view);
    console.log(`# hidden panel: ${h1.bytesIn - h0.bytesIn} bytes and ${h1.framesDrawn - h0.framesDrawn} frames in ${Date.now() - hiddenAt} ms`
      + ` (max growth seen ${hiddenMax}); hidden Screen view: ${viewEnd.bytesIn - viewStart.bytesIn} bytes over the whole flood`);
    await screenshot(page, 'ui-viewer-panel-hidden');
    assert.equal(h1.bytesIn, h0.bytesIn, 'a hidden panel receives no bytes');
    assert.equal(h1.framesDrawn, h0.framesDrawn, 'a hidden panel draws no frames');
    assert.equal(viewEnd.bytesIn, viewStart.bytesIn, 'the Screen view in the closed side bar receives no bytes');
    // The quiet is the session's own (webview/rfbPause.ts), not only a relay the host stopped reading.
    assert.equal(h1.rfbPaused, true, 'the hidden panel paused its RFB session');

    // Reveal it again: the same RFB session draws again, soon.
    // Watched inside the page, so the time is the frame's own, not a round trip later.
    const drawnAt = panel.evaluate(({ stats, from, timeoutMs }) => new Promise((resolve) => {
      const start = Date.now();
      const tick = () => {
        if (Number(document.querySelector(stats).dataset.frames) > from) resolve(Date.now());
        else if (Date.now() - start > timeoutMs) resolve(0);
        else setTimeout(tick, 5);
      };
      tick();
    }), { stats: SCREEN_FRAME, from: h1.framesDrawn, timeoutMs: 20_000 });
    const box = await tab.boundingBox();
    assert.ok(box, 'the Bot Screen tab has a box');
    const clickedAt = Date.now();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const frameAt = await drawnAt;
    assert.ok(frameAt > 0, 'the revealed panel draws a frame again');
    const revealMs = frameAt - clickedAt;
    const resumed = await screenStats(panel);
    console.log(`# reveal: first frame ${revealMs} ms after the tab click (resume sent to the server at +${resumed.resumedAt - clickedAt} ms,`
      + ` on ${resumed.resumedBy})`);
    assert.ok(revealMs < 5000, `the revealed panel draws within 5 s (took ${revealMs} ms)`);
    // The host's word on the direct channel (or the workbench's focus) resumed it, not the host's
    // 'visible' post, which waits behind the workbench's own work on the reveal.
    assert.ok(['socket', 'focus'].includes(resumed.resumedBy), `resumed on the direct channel's "shown" or the focus, not on ${resumed.resumedBy}`);
    const after = await screenStats(panel);
    assert.equal(after.connects, h1.connects, 'no reconnect: the same RFB session resumed');
    assert.equal(after.connects, visibleStart.connects, 'no reconnect since the panel opened');
    assert.equal(after.connection, 'live');
    assert.equal(after.rfbPaused, false, 'the revealed panel resumed its RFB session');
    assert.ok(after.bytesIn > h1.bytesIn, 'bytes flow again once revealed');
    await screenshot(page, 'ui-viewer-panel-revealed');
  });
});

test('the keyboard can be released from the canvas', { timeout: 420_000 }, async () => {
  await withDockerWindow(async (server, page) => {
    await startScreen(page);
    const view = await viewerFrame(page, 'view');
    await waitForDesktop(view, 'Screen view');
    await ourContainer(server); // exactly one sandbox for this window
    const palette = page.locator('.quick-input-widget');
    const keyboardBar = view.locator('#keyboard');
    const canvas = view.locator('#screen canvas').first();
    // Keys are captured only while this view holds control (view-only otherwise): take it.
    await view.locator('#control-button').click();
    await waitFor(async () => (await screenStats(view)).inControl, 10_000, 100, 'this view to hold control');

    const capture = async () => {
      await canvas.click();
      await keyboardBar.waitFor({ state: 'visible', timeout: 5_000 });
      assert.ok(await view.evaluate(() => document.activeElement instanceof HTMLCanvasElement), 'the canvas has focus');
      // While captured, the workbench's shortcuts do not fire: the keys go to the desktop.
      await page.keyboard.press('F1');
      await sleep(1000);
      assert.equal(await palette.isVisible(), false, 'F1 does not open the palette while the canvas holds the keyboard');
    };
    const paletteOpensOnF1 = async (how) => {
      await keyboardBar.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => {
        throw new Error(`the keyboard bar is still shown after releasing with ${how}`);
      });
      await page.keyboard.press('F1');
      await palette.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {
        throw new Error(`F1 did not open the palette after releasing with ${how}`);
      });
      await page.keyboard.press('Escape');
      await palette.waitFor({ state: 'hidden', timeout: 5_000 });
    };

    await capture();
    await screenshot(page, 'ui-viewer-keyboard-captured');
    await view.locator('#release').click();
    await paletteOpensOnF1('the Release keyboard button');

    await capture();
    await page.keyboard.press('Control+Alt+Shift+KeyK');
    await paletteOpensOnF1('Ctrl+Alt+Shift+K');
    assert.equal((await screenStats(view)).connects, 1, 'the session stayed up throughout');
  });
});

test('docker rm -f under a live screen: the view says the sandbox is gone within 2 s', { timeout: 420_000 }, async () => {
  await withDockerWindow(async (server, page) => {
    await startScreen(page);
    const view = await viewerFrame(page, 'view');
    await waitForDesktop(view, 'Screen view');
    const container = await ourContainer(server);
    assert.equal(await viewText(view, 'badge'), 'live');
    // Host Xvnc processes that belong to other runs (e.g. a gateway test elsewhere) may come and
    // go; any other new one would be this screen falling back to the host.
    const key = sh('docker', ['inspect', '-f', '{{.Name}}', container]).trim().replace(/^\/?botscreen-/, '');
    assert.match(key, /^\w+$/, 'the container is named after the workspace key');
    const hostBefore = new Set(hostXvnc().map((p) => p.pid));
    const othersRuntime = /\/botscreen-\d+\/(\w+)\//;
    const newHostXvnc = () => hostXvnc().filter((p) => {
      const m = othersRuntime.exec(p.cmdline);
      return !hostBefore.has(p.pid) && !(m && m[1] !== key);
    });

    const rmStart = Date.now();
    execFileSync('docker', ['rm', '-f', container], { stdio: 'ignore' });
    const rmDone = Date.now();
    const seen = await waitFor(async () => {
      const [detail, badge] = await Promise.all([viewText(view, 'detail'), viewText(view, 'badge')]);
      return detail.includes(GONE_SENTENCE) && badge === 'sandbox gone' ? Date.now() : undefined;
    }, 10_000, 50, 'the view to say the sandbox is gone');
    console.log(`# sandbox gone shown ${seen - rmDone} ms after docker rm -f returned (${seen - rmStart} ms after it started)`);
    await screenshot(page, 'ui-viewer-sandbox-gone');
    assert.ok(seen - rmDone <= 2000, `the view said "sandbox gone" within 2 s (took ${seen - rmDone} ms)`);
    assert.equal(await view.locator('#detail').isVisible(), true, 'the detail line is shown');
    assert.equal(await view.locator('#actions [data-action="start"]').count(), 1, 'Start is offered');
    const p = await screenStats(view);
    assert.equal(p.hostState, 'gone');
    assert.notEqual(p.connection, 'live');
    await sleep(2000); // a fallback would take a moment to appear
    assert.deepEqual(newHostXvnc(), [], 'no Xvnc started on this machine');

    // Start again: a new sandbox, and the desktop is back in the same view.
    const restartAt = Date.now();
    await startScreen(page);
    await waitFor(async () => (await screenStats(view)).connection === 'live', 60_000, 200, 'the view to be live again');
    await waitForDesktop(view, 'Screen view after the restart');
    console.log(`# desktop back ${Date.now() - restartAt} ms after Start`);
    const again = await ourContainer(server);
    assert.notEqual(again, container, 'a new container');
    assert.equal(await viewText(view, 'badge'), 'live');
    assert.equal(await view.locator('#detail').isVisible(), false, 'the gone sentence is cleared');
    assert.notEqual(sh('docker', ['exec', again, 'pgrep', '-x', 'Xvnc']).trim(), '', 'Xvnc runs in the new container');
    assert.deepEqual(newHostXvnc(), [], 'still no Xvnc on this machine');
    await screenshot(page, 'ui-viewer-restarted');
  });
});

test('the connection panel opens from the keyboard and shows numbers that grow while the screen draws; a long flood does not grow the webview\'s renderer', { timeout: 540_000 }, async () => {
  await withDockerWindow(async (server, page) => {
    await startScreen(page);
    const view = await viewerFrame(page, 'view');
    await waitForDesktop(view, 'Screen view');
    const container = await ourContainer(server);
    const toggle = view.locator('#connection-toggle');
    const panel = view.locator('#connection');
    const value = async (row) => Number((await view.locator(`#connection dd[data-row="${row}"]`).textContent()).replace(/,/g, ''));
    assert.equal(await panel.isVisible(), false, 'the panel starts closed');
    assert.equal(await toggle.getAttribute('aria-label'), 'Connection info');

    // Open it from the keyboard: Enter on its button (focused).
    await toggle.press('Enter');
    await panel.waitFor({ state: 'visible', timeout: 5_000 });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    const labels = (await view.locator('#connection dt').allTextContents()).map((l) => l.trim());
    assert.deepEqual(labels, ['Connection', 'JPEG quality / compression level', 'Frames drawn per second', 'Received (MB/s)',
      'Received in total (MB)', 'Connect to first frame (ms)', 'Since the last frame (s)', 'Reconnects', 'Transport']);
    assert.equal(await view.locator('#connection dd[data-row="connection"]').textContent(), 'live');
    assert.match(await view.locator('#connection dd[data-row="quality"]').textContent(), /^\d \/ \d$/);
    assert.ok((await value('firstFrame')) > 0, 'the time to the first frame is shown');
    assert.equal(await value('reconnects'), 0);
    assert.equal(await view.locator('#connection dd[data-row="transport"]').textContent(), 'Direct socket');

    // While the screen draws a flood, the panel's numbers grow, and so do its data-* attributes.
    const before = await screenStats(view);
    const totalBefore = await value('total');
    startFlood(container);
    const floodAt = Date.now();
    const drawing = await waitFor(async () => {
      const [rate, frameRate, total] = [await value('rate'), await value('frameRate'), await value('total')];
      return rate > 0 && frameRate > 0 && total > totalBefore ? { rate, frameRate, total } : undefined;
    }, 20_000, 250, 'the panel to show the flood');
    const during = await screenStats(view);
    console.log(`# connection panel during the flood: ${drawing.frameRate} frames/s, ${drawing.rate} MB/s, ${drawing.total} MB in total`);
    await screenshot(page, 'ui-viewer-connection-panel');
    assert.ok(during.framesDrawn > before.framesDrawn && during.framesDrawn > 0, 'frames are counted');
    assert.ok(during.bytesIn > before.bytesIn && during.bytesIn > 0, 'bytes are counted');
    assert.ok(during.lastFrameAt >= during.firstFrameAt && during.firstFrameAt >= during.openedAt && during.openedAt > 0);
    assert.ok(await value('lastFrame') < 5, 'the last frame is recent');

    // Escape closes it; closed, its text stands still while the counters run on.
    await toggle.press('Escape');
    await panel.waitFor({ state: 'hidden', timeout: 5_000 });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.ok(await view.evaluate(() => document.activeElement?.id === 'connection-toggle'), 'the focus is back on the button');
    const frozen = await view.locator('#connection dl').textContent();
    const closedAt = await screenStats(view);
    await sleep(1500);
    assert.equal(await view.locator('#connection dl').textContent(), frozen, 'a closed panel does not refresh');
    assert.ok((await screenStats(view)).bytesIn > closedAt.bytesIn, 'the data-* attributes count on while it is closed');

    // A flood kept on screen does not grow the renderer that draws it (issue 13's soak:
    // noVNC's data: URL image per JPEG rectangle grew it by 150-300 MiB a minute, its JS heap flat;
    // webview/imageDecode.ts). Measured from 20 s into the flood, once the renderer has warmed up.
    const renderer = await rendererOf(view);
    await sleep(Math.max(0, 20_000 - (Date.now() - floodAt)));
    // A minute, longer on a machine so loaded that less than FLOOD_MIN_MB arrived by then.
    const m0 = await screenStats(view);
    const rss0 = rssMiB(renderer);
    let rssMax = rss0;
    const series = [Math.round(rss0)];
    let m1;
    let drawnMB = 0;
    do {
      await sleep(10_000);
      const rss = rssMiB(renderer);
      rssMax = Math.max(rssMax, rss);
      series.push(Math.round(rss));
      m1 = await screenStats(view);
      drawnMB = (m1.bytesIn - m0.bytesIn) / 1e6;
    } while (series.length <= 6 || (drawnMB < FLOOD_MIN_MB && series.length <= 15));
    console.log(`# ${(series.length - 1) * 10} s of flood: ${drawnMB.toFixed(1)} MB, ${m1.framesDrawn - m0.framesDrawn} frames; webview renderer RSS every 10 s: ${series.join(', ')} MiB`);
    assert.ok(drawnMB >= FLOOD_MIN_MB && m1.framesDrawn - m0.framesDrawn >= 60, `the screen streamed and drew the flood all along (at least ${FLOOD_MIN_MB} MB)`);
    assert.equal(m1.connects, m0.connects, 'one session throughout');
    assert.ok(rssMax - rss0 <= RENDERER_GROWTH_MIB, `the webview's renderer grew ${Math.round(rssMax - rss0)} MiB over ${drawnMB.toFixed(1)} MB of flood (bound ${RENDERER_GROWTH_MIB} MiB)`);
  });
});

/**
 * An upgrade request to the direct channel from this (Node) process, as another local program
 * would send it: the HTTP status it gets (101 when upgraded, then hung up).
 */
function upgradeStatus(url, origin) {
  return new Promise((resolve, reject) => {
    const { hostname, port, pathname } = new URL(url.replace(/^ws/, 'http'));
    const req = http.request({ hostname, port, path: pathname, headers: {
      Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'), Origin: origin, 'Sec-WebSocket-Protocol': 'botscreen.rfb',
    } });
    req.on('upgrade', (res, socket) => { socket.destroy(); resolve(res.statusCode); });
    req.on('response', (res) => { res.resume(); resolve(res.statusCode); });
    req.on('error', reject);
    req.end();
  });
}

test('the viewer streams over the direct channel, which refuses a guessed token, another origin and a second use; '
  + 'when it cannot be dialled the viewer goes on over postMessage', { timeout: 420_000 }, async () => {
  await withDockerWindow(async (server, page) => {
    await startScreen(page);
    const view = await viewerFrame(page, 'view');
    await waitForDesktop(view, 'Screen view');
    const container = await ourContainer(server);
    assert.equal((await screenStats(view)).transport, 'direct', 'the first session goes over the direct channel');
    // The page's script and styles come inlined with its HTML (src/webviewHtml.ts): nothing fetched, styles applied.
    const loaded = await view.evaluate(() => ({
      files: performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /\.(js|css)(\?|$)/.test(n)),
      bodyDisplay: getComputedStyle(document.body).display,
      barDisplay: getComputedStyle(document.querySelector('.bar')).display,
    }));
    assert.deepEqual(loaded.files, [], 'no script or stylesheet fetched by the Screen page');
    assert.equal(loaded.bodyDisplay, 'flex', 'screen.css applies (inlined under the nonce)');
    assert.equal(loaded.barDisplay, 'flex', 'screen.css applies to the header');
    // The page may dial exactly the channel's origins: VS Code's external address for the port
    // (here the server's own origin, with a /proxy/<port>/ path) and the loopback address itself.
    const csp = await view.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]').content);
    const origins = /connect-src ([^;]+)/.exec(csp)?.[1].trim().split(/\s+/) ?? [];
    const webviewHost = await view.evaluate(() => location.host);
    const channelOrigin = origins.find((o) => o !== `ws://${webviewHost}`);
    assert.ok(origins.length >= 1 && origins.length <= 2 && origins.every((o) => /^ws:\/\/127\.0\.0\.1:\d+$/.test(o)),
      `the CSP names the direct channel's origins and no other: ${csp}`);
    assert.ok(channelOrigin, `the CSP names the loopback origin: ${csp}`);

    startFlood(container);
    const s0 = await screenStats(view);
    await waitFor(async () => (await screenStats(view)).bytesIn - s0.bytesIn > 500_000, 30_000, 200, 'the flood over the direct channel');
    const s1 = await screenStats(view);
    assert.equal(s1.transport, 'direct');
    assert.equal(s1.connects, s0.connects, 'the same session');

    // The next session's dial is caught (the page's WebSocket replaced by one that records and
    // never opens), so this process can try the real token before and after the webview would.
    const webviewOrigin = await view.evaluate(() => location.origin);
    await view.evaluate(() => {
      window.dialed = [];
      window.RealWebSocket = window.WebSocket;
      window.WebSocket = class { constructor(url) { window.dialed.push(url); } close() {} };
    });
    // End the relay in the sandbox: the view reconnects, and dials the new session's token.
    execFileSync('docker', ['exec', container, 'pkill', '-f', '^python3 -c'], { stdio: 'ignore' });
    const [first] = await waitFor(async () => {
      const dialed = await view.evaluate(() => window.dialed);
      return dialed.length > 0 ? dialed : undefined;
    }, 20_000, 20, 'the view to dial a new session');
    const token = /\/([0-9a-f]{64})$/.exec(first)?.[1];
    assert.ok(token, `a 256-bit token at the end of the path: ${first}`);
    // The same token at the loopback address (the view tries it when the external one has not opened within 60 ms).
    const url = `${channelOrigin}/${token}`;
    // Quickly, while the token is on offer (the view gives up on each address after 5 s): other origins are refused
    // without spending it, the webview's origin gets in once.
    assert.equal(await upgradeStatus(url, 'http://example.com'), 403, 'another origin is refused');
    assert.equal(await upgradeStatus(url, 'null'), 403, 'a sandboxed page (origin null) is refused');
    assert.equal(await upgradeStatus(url, webviewOrigin), 101, 'the token with the webview\'s origin is accepted, once');
    assert.equal(await upgradeStatus(url, webviewOrigin), 403, 'a token is good for one connection');
    assert.equal(await upgradeStatus(url.replace(/.$/, (c) => (c === '0' ? '1' : '0')), webviewOrigin), 403, 'a token one digit off is refused');
    // From the webview itself (the right origin, allowed by its CSP), a guessed token never opens a socket.
    const guessed = await view.evaluate((guess) => new Promise((resolve) => {
      const ws = new window.RealWebSocket(guess, 'botscreen.rfb');
      ws.onopen = () => { ws.close(); resolve('open'); };
      ws.onerror = () => resolve('refused');
    }), url.replace(/[0-9a-f]{64}$/, '0'.repeat(64)));
    assert.equal(guessed, 'refused', 'a guessed token is refused');

    // The view's dial times out; it asks again without the direct channel and draws over postMessage.
    const fallback = await waitFor(async () => {
      const s = await screenStats(view);
      return s.transport === 'postMessage' && s.connection === 'live' && s.framesDrawn > 0 ? s : undefined;
    }, 30_000, 200, 'the view to draw over postMessage');
    const f0 = fallback.bytesIn;
    await waitFor(async () => (await screenStats(view)).bytesIn - f0 > 200_000, 20_000, 200, 'the flood over postMessage');
    console.log(`# direct channel refused a guessed token, 2 other origins and a reused token; fallback live after ${fallback.connects - s1.connects} reconnect(s)`);
    await screenshot(page, 'ui-viewer-fallback');
  });
});
