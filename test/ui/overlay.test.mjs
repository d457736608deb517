// The live action overlay in a real VS Code on a real sandbox: the agent clicks through the real
// click tool (vscode.lm.invokeTool inside the real extension host, test/vscode/overlayTools.ts),
// and the Screen view and the editor panel each draw the ripple where that screen point shows in
// their own view — read from the overlay's DOM (the ripple's box centre against the canvas's box
// and its scale) — in Fit and in a scrolled 1:1, within 100 ms of the action. How the 100 ms is
// measured: the host stamps Date.now() as the runner begins the action (right before xdotool
// runs), the webview stamps Date.now() in the first animation frame after it added the ripple;
// both are this machine's wall clock, and the host's stamp must fall inside the tool call as the
// extension host timed it. The toggle turns it off in every view (nothing drawn), and while the
// overlay draws, the webviews send no input to the screen (their RFB messages are parsed).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { bundleExtensionHostTests } from '../vscode/bundle.mjs';
import { REPO_ROOT, canvasColorCount, runCommand, sleep, waitFor } from './harness.mjs';
import { TITLES, extensionLog, screenStats, startScreenPatiently, viewerFrame, withWindow } from './botscreen.mjs';

const WIDTH = 1600;
const HEIGHT = 1000;
/** The bound: from the action to the ripple on screen. */
const LIMIT_MS = 100;

const drawn = async (frame) => (await canvasColorCount(frame, { minWidth: WIDTH }).catch(() => ({ colors: 0 }))).colors >= 10;

/** Records every byte the webview's direct channel sends from now on (WebSocket.send is the only way out). */
async function recordSends(frame) {
  await frame.evaluate(() => {
    const sent = [];
    window.__overlayTestSent = sent;
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      sent.push(Array.from(bytes));
      return send.call(this, data);
    };
  });
}

/**
 * The RFB client messages the webview sent since recordSends, by name (RFC 6143 and TigerVNC's
 * extensions): update requests, fences and continuous-update switches are the session's own
 * traffic; KeyEvent, PointerEvent, ClientCutText and QEMU key events would be input. A byte that
 * starts no known message ends the parse as `unparsed`.
 */
async function sentMessages(frame) {
  const bytes = (await frame.evaluate(() => window.__overlayTestSent)).flat();
  const u32 = (i) => ((bytes[i] << 24) | (bytes[i + 1] << 16) | (bytes[i + 2] << 8) | bytes[i + 3]) >>> 0;
  const names = [];
  for (let i = 0; i < bytes.length;) {
    const type = bytes[i];
    const known = {
      3: ['FramebufferUpdateRequest', 10],
      4: ['KeyEvent', 8],
      5: ['PointerEvent', 6],
      150: ['EnableContinuousUpdates', 10],
      255: ['QEMUKeyEvent', 12],
    }[type];
    if (known) {
      names.push(known[0]);
      i += known[1];
    } else if (type === 6 && i + 8 <= bytes.length) {
      names.push('ClientCutText');
      i += 8 + (u32(i + 4) & 0x7fffffff);
    } else if (type === 248 && i + 9 <= bytes.length) {
      names.push('ClientFence');
      i += 9 + bytes[i + 8];
    } else {
      names.push(`unparsed ${type}`);
      break;
    }
  }
  return { total: bytes.length, names };
}

/** The ripple for screen point (x, y) in `frame` once it has been on screen, with the geometry to check it against. */
function rippleIn(frame, x, y) {
  return waitFor(() => frame.evaluate(({ x, y }) => {
    const ripple = document.querySelector(`.overlay-ripple[data-x="${x}"][data-y="${y}"]`);
    if (!ripple || !ripple.dataset.drawnAt) return undefined;
    const canvas = document.querySelector('#screen canvas');
    const box = (r) => ({ left: r.left, top: r.top, width: r.width, height: r.height });
    const r = ripple.getBoundingClientRect();
    return {
      centre: { x: r.left + r.width / 2, y: r.top + r.height / 2 },
      canvas: box(canvas.getBoundingClientRect()),
      pixels: { width: canvas.width, height: canvas.height },
      layer: box(document.querySelector('.overlay').getBoundingClientRect()),
      mode: document.querySelector('#screen').dataset.viewMode,
      button: ripple.dataset.button,
      actionAt: Number(ripple.dataset.actionAt),
      receivedAt: Number(ripple.dataset.receivedAt),
      drawnAt: Number(ripple.dataset.drawnAt),
      ringAnimation: getComputedStyle(ripple.querySelector('.ring')).animationName,
      pointerEvents: getComputedStyle(ripple).pointerEvents,
      caption: document.querySelector('.overlay-caption').textContent,
    };
  }, { x, y }).catch(() => undefined), 10_000, 15, `the ripple at (${x}, ${y})`);
}

/** The ripple is centred where screen point (x, y) is drawn (pixel centre, at the canvas's scale);
 *  returns how long after the action began it was drawn (the caller judges that). */
function checkRipple(where, seen, x, y, call) {
  const expected = {
    x: seen.canvas.left + ((x + 0.5) * seen.canvas.width) / seen.pixels.width,
    y: seen.canvas.top + ((y + 0.5) * seen.canvas.height) / seen.pixels.height,
  };
  const scale = seen.canvas.width / seen.pixels.width;
  console.log(`# ${where}: ${seen.mode} at scale ${scale.toFixed(3)}; ripple centre (${seen.centre.x.toFixed(1)}, ${seen.centre.y.toFixed(1)}), `
    + `expected (${expected.x.toFixed(1)}, ${expected.y.toFixed(1)}); message ${seen.receivedAt - seen.actionAt} ms, drawn ${seen.drawnAt - seen.actionAt} ms after the action began`);
  assert.equal(seen.pixels.width, WIDTH, `${where}: the canvas is the screen's ${WIDTH} px`);
  assert.ok(Math.abs(seen.centre.x - expected.x) <= 1 && Math.abs(seen.centre.y - expected.y) <= 1,
    `${where}: the ripple's centre ${JSON.stringify(seen.centre)} is where (${x}, ${y}) is drawn, ${JSON.stringify(expected)}`);
  assert.ok(seen.actionAt >= call.before && seen.actionAt <= call.after, `${where}: the action's stamp ${seen.actionAt} lies within the tool call [${call.before}, ${call.after}]`);
  assert.equal(seen.pointerEvents, 'none', `${where}: the ripple takes no pointer events`);
  return seen.drawnAt - seen.actionAt;
}

test('the agent\'s click draws a ripple where it lands in every view, in Fit and 1:1, within 100 ms; the toggle turns it off; the overlay sends nothing', { timeout: 600_000 }, async () => {
  assert.ok(fs.existsSync(path.join(REPO_ROOT, 'dist', 'extension.js')), 'dist/extension.js exists (npm run package)');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'botscreen-overlay-'));
  const testsFile = path.join(work, 'overlayTools.js');
  await bundleExtensionHostTests(testsFile, 'overlayTools.ts');
  const saved = { ...process.env };
  let calls = 0;
  /** One tool call in the extension host; resolves to its result and the host's time around it. */
  const call = async (tool, input) => {
    calls += 1;
    const request = path.join(work, `request-${calls}.json`);
    fs.writeFileSync(`${request}.tmp`, JSON.stringify({ tool, input }));
    fs.renameSync(`${request}.tmp`, request);
    const response = path.join(work, `response-${calls}.json`);
    await waitFor(() => fs.existsSync(response), 60_000, 10, `the extension host to call ${tool}`);
    return JSON.parse(fs.readFileSync(response, 'utf8'));
  };
  try {
    // The extension host inherits the server's environment: that is how the module learns the directory.
    Object.assign(process.env, { BOTSCREEN_OVERLAY_DIR: work });
    await withWindow({
      'botScreen.sandbox.backend': 'docker',
      'botScreen.screen.geometry': `${WIDTH}x${HEIGHT}`,
      'botScreen.idleStopMinutes': 0,
      'botScreen.statusBar.visible': 'always',
    }, async (server, page) => {
      try {
        const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${p}`;
        const payload = JSON.stringify([['extensionDevelopmentPath', remote(REPO_ROOT)], ['extensionTestsPath', remote(testsFile)]]);
        await page.goto(`${server.url}/?folder=${encodeURIComponent(server.workspace)}&payload=${encodeURIComponent(payload)}`, { timeout: 120_000 });
        await waitFor(() => fs.existsSync(path.join(work, 'ready')) || fs.existsSync(path.join(work, 'fatal')), 180_000, 200, 'the extension-host module');
        assert.ok(!fs.existsSync(path.join(work, 'fatal')), `the module failed: ${fs.existsSync(path.join(work, 'fatal')) && fs.readFileSync(path.join(work, 'fatal'), 'utf8')}`);

        await startScreenPatiently(page);
        const view = await viewerFrame(page, false);
        await waitFor(() => drawn(view), 180_000, 250, 'the Screen view to draw the desktop');
        await runCommand(page, TITLES.openInEditor);
        const panel = await viewerFrame(page, true);
        await waitFor(() => drawn(panel), 60_000, 250, 'the panel to draw the desktop');
        const frames = [['Screen view', view], ['editor panel', panel]];
        for (const [where, frame] of frames) {
          assert.equal((await screenStats(frame)).transport, 'direct', `${where}: the screen's bytes go over the direct channel (the only way out recorded)`);
          assert.equal(await frame.locator('.overlay-toggle').getAttribute('aria-pressed'), 'true', `${where}: the overlay is on by default`);
          await recordSends(frame);
        }

        // Fit, in both views (each at its own scale). The time from the action to the ripple is the
        // overlay's own path (a message and a draw), but on a loaded 2-core machine any one message
        // may wait behind other work: a click that came late is tried again at another point, up
        // to 3 times, and the best must be in time. A slow path (a debounce, a poll) misses all 3.
        let x;
        let y = 420;
        let result;
        const late = [];
        for (let attempt = 0; ; attempt++) {
          x = 700 + 10 * attempt;
          const pending = frames.map(([, frame]) => rippleIn(frame, x, y));
          result = await call('bot-screen_click', { x, y });
          assert.match(result.text, new RegExp(`^Clicked the left button at \\(${x}, ${y}\\)`));
          let slowest = 0;
          for (const [i, seen] of (await Promise.all(pending)).entries()) {
            const where = frames[i][0];
            assert.equal(seen.mode, 'fit', `${where} fits`);
            assert.ok(seen.canvas.width < WIDTH, `${where}: the screen is scaled down to fit (${seen.canvas.width} px wide)`);
            assert.equal(seen.button, 'left');
            assert.equal(seen.ringAnimation, 'overlay-ripple', `${where}: the ripple animates`);
            assert.equal(seen.caption, `Clicking at (${x}, ${y})`, `${where}: the tool call's words`);
            slowest = Math.max(slowest, checkRipple(where, seen, x, y, result));
          }
          if (slowest <= LIMIT_MS) break;
          late.push(slowest);
          assert.ok(attempt < 2, `drawn ${late.join(', ')} ms after the action began in 3 clicks (at most ${LIMIT_MS})`);
          console.log(`# click ${attempt + 1} drawn ${slowest} ms after the action began; once more`);
        }

        // 1:1 in the panel, scrolled right and down; the view still fits. Reduced motion: still drawn, not animated.
        await panel.locator('.view-mode[data-mode="actual"]').click();
        await waitFor(() => panel.evaluate(() => document.querySelector('#screen').dataset.viewMode === 'actual'), 5_000, 50, 'the panel in 1:1');
        // Scrolled down (and right, where the panel is narrower than the screen); the point is
        // the middle of what shows.
        const scrolled = await waitFor(() => panel.evaluate(() => {
          const scroller = document.querySelector('#screen canvas').parentElement;
          scroller.scrollLeft = 150;
          scroller.scrollTop = 80;
          const shown = scroller.getBoundingClientRect();
          return scroller.scrollTop > 0 ? {
            left: scroller.scrollLeft,
            top: scroller.scrollTop,
            width: Math.min(scroller.clientWidth, window.innerWidth - shown.left),
            height: Math.min(scroller.clientHeight, window.innerHeight - shown.top),
          } : undefined;
        }), 5_000, 100, 'the panel to scroll in 1:1');
        x = Math.min(WIDTH - 1, scrolled.left + Math.floor(scrolled.width / 2));
        y = Math.min(HEIGHT - 1, scrolled.top + Math.floor(scrolled.height / 2));
        await page.emulateMedia({ reducedMotion: 'reduce' });
        const pending = frames.map(([, frame]) => rippleIn(frame, x, y));
        result = await call('bot-screen_click', { x, y, button: 'right' });
        assert.match(result.text, /^Clicked the right button/);
        const [inView, inPanel] = await Promise.all(pending);
        assert.equal(inPanel.mode, 'actual');
        assert.equal(inPanel.canvas.width, WIDTH, 'the panel draws one screen pixel per view pixel');
        assert.ok(inPanel.canvas.top < inPanel.layer.top, 'the panel\'s canvas is scrolled');
        assert.ok(inPanel.centre.x > inPanel.layer.left && inPanel.centre.x < inPanel.layer.left + inPanel.layer.width
          && inPanel.centre.y > inPanel.layer.top && inPanel.centre.y < inPanel.layer.top + inPanel.layer.height, 'the ripple shows inside the visible part');
        checkRipple('editor panel', inPanel, x, y, result);
        checkRipple('Screen view', inView, x, y, result);
        for (const seen of [inView, inPanel]) {
          assert.equal(seen.button, 'right', 'the ripple shows the right button');
          assert.equal(seen.ringAnimation, 'none', 'reduced motion: drawn, not animated');
        }
        await page.emulateMedia({ reducedMotion: 'no-preference' });

        // No input went to the screen from either view while the overlay drew: only the session's own messages.
        for (const [where, frame] of frames) {
          const { total, names } = await sentMessages(frame);
          const counts = names.reduce((c, n) => ({ ...c, [n]: (c[n] ?? 0) + 1 }), {});
          console.log(`# ${where} sent ${total} bytes while the overlay drew: ${JSON.stringify(counts)}`);
          assert.deepEqual(names.filter((n) => !['FramebufferUpdateRequest', 'ClientFence', 'EnableContinuousUpdates'].includes(n)), [],
            `${where}: no input message (and nothing unparsed) was sent`);
        }

        // Off, from the panel's toggle: both views stop drawing.
        await panel.locator('.overlay-toggle').click();
        for (const [where, frame] of frames) {
          await waitFor(async () => (await frame.locator('.overlay-toggle').getAttribute('aria-pressed')) === 'false', 10_000, 50, `${where}: the toggle off`);
        }
        result = await call('bot-screen_click', { x: 100, y: 100 });
        assert.match(result.text, /^Clicked the left button at \(100, 100\)/);
        await sleep(1000);
        for (const [where, frame] of frames) {
          const shown = await frame.evaluate(() => ({
            marks: document.querySelectorAll('.overlay-mark').length,
            pointer: !document.querySelector('.overlay-pointer').hidden,
            caption: !document.querySelector('.overlay-caption').hidden,
            layer: !document.querySelector('.overlay').hidden,
          }));
          assert.deepEqual(shown, { marks: 0, pointer: false, caption: false, layer: false }, `${where}: nothing drawn with the overlay off`);
        }
        // And on again.
        await view.locator('.overlay-toggle').click();
        for (const [where, frame] of frames) {
          await waitFor(async () => (await frame.locator('.overlay-toggle').getAttribute('aria-pressed')) === 'true', 10_000, 50, `${where}: the toggle on`);
        }
      } catch (err) {
        console.log(extensionLog(server).split('\n').slice(-40).join('\n'));
        throw err;
      } finally {
        fs.writeFileSync(path.join(work, 'end'), '');
      }
    }, { vsix: false, indicator: false, failureShot: 'ui-overlay-failed' });
  } finally {
    for (const key of Object.keys(process.env)) {
      if (!(key in saved)) delete process.env[key];
    }
    Object.assign(process.env, saved);
    fs.rmSync(work, { recursive: true, force: true });
  }
});
