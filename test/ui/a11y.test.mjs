// The Screen view for keyboard and screen-reader users, in a real VS Code: every control is
// reached with Tab and shows VS Code's focus ring, Take control and Hand back work with Enter and
// Space, the canvas joins the Tab order only while keys reach it, changes are announced through
// a polite live region, Playwright's accessibility snapshot names every control, and a
// high-contrast theme gives the controls its contrast border.
import assert from 'node:assert/strict';
import test from 'node:test';
import { runCommand, screenshot, waitFor } from './harness.mjs';
import { TITLES, l10nText, screenFrame, screenStats, withWindow } from './botscreen.mjs';

/** Puts the keyboard focus into the Screen view's webview, from the palette (the keyboard). */
async function focusView(page, frame) {
  await runCommand(page, 'Bot Screen: Focus on Screen View');
  await waitFor(() => frame.evaluate(() => document.hasFocus()), 10_000, 100, 'the Screen view to have the keyboard focus');
}

/** What has the focus in the view: an id, a button's action, or the tag name. */
const focused = (frame) => frame.evaluate(() => {
  const el = document.activeElement;
  return el?.id || (el instanceof HTMLElement && el.dataset.action) || el?.tagName.toLowerCase() || '';
});

/** Whether the focused element shows a ring in VS Code's focus colour (--vscode-focusBorder). */
const focusRingShown = (frame) => frame.evaluate(() => {
  const el = document.activeElement;
  const probe = document.createElement('span');
  probe.style.color = 'var(--vscode-focusBorder)';
  document.body.append(probe);
  const focusColour = getComputedStyle(probe).color;
  probe.remove();
  const style = getComputedStyle(el);
  return style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1 && style.outlineColor === focusColour;
});

const announced = (frame) => frame.locator('#announce').textContent();

/**
 * Starts the screen and waits for the view to be live. On a machine so loaded that the launcher
 * times out, starts again (twice at most, and says so): this file checks the view, not start times.
 */
async function startLive(page) {
  for (let attempt = 1; ; attempt++) {
    await runCommand(page, TITLES.start, { timeoutMs: 20_000 });
    const frame = await screenFrame(page, 60_000);
    const state = await waitFor(async () => {
      const stats = await screenStats(frame);
      return stats.hostState === 'error' ? 'error' : stats.connection === 'live' ? 'live' : undefined;
    }, 180_000, 250, 'the view to be live');
    if (state === 'live') return frame;
    const why = await frame.locator('#detail').textContent();
    if (attempt === 3) throw new Error(`the screen did not start: ${why}`);
    console.log(`# start attempt ${attempt} failed (${why}); starting again`);
  }
}

test('the Screen view works from the keyboard alone and names every control', { timeout: 360_000 }, async () => {
  await withWindow({ 'botScreen.sandbox.backend': 'docker' }, async (server, page) => {
    const frame = await startLive(page);
    const canvas = frame.locator('#screen canvas').first();
    assert.equal(await canvas.getAttribute('role'), 'img');
    assert.match(await canvas.getAttribute('aria-label'), /agent has control/, 'the canvas is labelled with the state and the holder');
    assert.equal(await canvas.getAttribute('tabindex'), '-1', 'a view-only canvas is not a Tab stop (it would swallow Tab)');

    await focusView(page, frame);
    // Tab through the view, in the order it reads, to Take control: each stop shows the ring.
    const stops = [];
    for (let i = 0; i < 12 && (stops.at(-1) !== 'control-button'); i++) {
      await page.keyboard.press('Tab');
      const stop = await focused(frame);
      stops.push(stop);
      assert.ok(await focusRingShown(frame), `${stop} shows VS Code's focus ring`);
    }
    console.log(`# Tab order: ${stops.join(' → ')}`);
    assert.equal(stops.at(-1), 'control-button', `Tab reaches Take control (${stops.join(', ')})`);
    for (const stop of ['connection-toggle', 'stop', 'openInEditor']) {
      assert.ok(stops.includes(stop), `Tab reaches ${stop} (${stops.join(', ')})`);
    }
    assert.ok(stops.indexOf('connection-toggle') < stops.indexOf('stop') && stops.indexOf('stop') < stops.indexOf('control-button'), 'the order is the reading order');

    await page.keyboard.press('Enter');
    await waitFor(async () => (await screenStats(frame)).inControl, 15_000, 100, 'Enter on Take control to give this view control');
    const mine = await frame.locator('#control-text').textContent();
    assert.match(mine, /You have control/);
    await waitFor(async () => (await announced(frame)) === mine, 5_000, 100, 'the control change to be announced');
    assert.equal(await frame.locator('#control-button').textContent(), l10nText('Hand back'));
    assert.equal(await focused(frame), 'control-button', 'the focus stays on the button');
    assert.match(await canvas.getAttribute('aria-label'), /You have control/);
    assert.equal(await canvas.getAttribute('role'), 'application');

    // In control, the canvas is the next Tab stop: keys go to the screen, and the view says how
    // to get them back.
    await page.keyboard.press('Tab');
    assert.equal(await frame.evaluate(() => document.activeElement instanceof HTMLCanvasElement), true, 'Tab reaches the canvas in control');
    assert.ok(await focusRingShown(frame), 'the canvas shows the focus ring');
    await frame.locator('#keyboard').waitFor({ state: 'visible', timeout: 5_000 });
    assert.equal(await announced(frame), l10nText('Keys go to the screen. Release with Ctrl+Alt+Shift+K.'));
    await screenshot(page, 'ui-a11y-canvas-focused');
    await page.keyboard.press('Control+Alt+Shift+KeyK');
    await waitFor(async () => (await focused(frame)) === 'screen', 5_000, 100, 'the keyboard to be released');
    assert.equal(await announced(frame), l10nText('Keys go to VS Code again.'));

    // Back to Hand back with Shift+Tab, and Space presses it.
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(frame), 'control-button');
    await page.keyboard.press('Space');
    await waitFor(async () => !(await screenStats(frame)).inControl, 15_000, 100, 'Space on Hand back to give control back');
    await waitFor(async () => /agent has control/.test(await announced(frame)), 5_000, 100, 'the hand back to be announced');

    // Every control in the accessibility tree has a name.
    for (const toggle of [false, true]) {
      if (toggle) await frame.locator('#connection-toggle').click();
      const tree = await frame.locator('body').ariaSnapshot();
      // A YAML line whose text holds a colon comes single-quoted: `- 'img "a: b"'`.
      const controls = tree.split('\n').map((line) => line.replace(/^(\s*)- '(.*)'$/, '$1- $2').replace(/''/g, "'"))
        .filter((line) => /^\s*- (button|img|application|region)\b/.test(line));
      console.log(`# accessibility snapshot${toggle ? ' (connection panel open)' : ''}:\n${tree.split('\n').map((l) => `#   ${l}`).join('\n')}`);
      assert.ok(controls.some((line) => /- img "/.test(line)), 'the screen is in the tree, named');
      assert.ok(controls.filter((line) => /- button "/.test(line)).length >= 4, 'the buttons are in the tree');
      for (const line of controls) {
        assert.match(line, /^\s*- \w+ "[^"]+"/, `a control without a name: ${line.trim()}`);
      }
    }
  }, { failureShot: 'ui-a11y-failed' });
});

test('in a high-contrast theme the controls have the theme\'s contrast border', { timeout: 300_000 }, async () => {
  await withWindow({ 'botScreen.sandbox.backend': 'docker', 'workbench.colorTheme': 'Default High Contrast' }, async (server, page) => {
    const frame = await startLive(page);
    await screenshot(page, 'ui-a11y-high-contrast');
    const report = await frame.evaluate(() => {
      const probe = document.createElement('span');
      document.body.append(probe);
      const colourOf = (variable) => {
        probe.style.color = `var(${variable})`;
        return getComputedStyle(probe).color;
      };
      const contrast = colourOf('--vscode-contrastBorder');
      const buttons = [...document.querySelectorAll('button:not(.icon)')].filter((b) => b.offsetParent !== null).map((b) => {
        const s = getComputedStyle(b);
        return { text: b.textContent, width: s.borderTopWidth, style: s.borderTopStyle, colour: s.borderTopColor };
      });
      const badge = getComputedStyle(document.getElementById('badge'));
      probe.remove();
      return { highContrast: document.body.classList.contains('vscode-high-contrast'), contrast, buttons, badge: badge.outlineColor };
    });
    assert.ok(report.highContrast, 'the webview runs in the high-contrast theme');
    assert.notEqual(report.contrast, 'rgba(0, 0, 0, 0)', 'the theme has a contrast border colour');
    assert.ok(report.buttons.length >= 3, `visible buttons: ${JSON.stringify(report.buttons)}`);
    for (const b of report.buttons) {
      assert.deepEqual([b.width, b.style, b.colour], ['1px', 'solid', report.contrast], `"${b.text}" has the contrast border`);
    }
    assert.equal(report.badge, report.contrast, 'the badge has the contrast outline');
  }, { failureShot: 'ui-a11y-high-contrast-failed' });
});
