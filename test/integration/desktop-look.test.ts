// The sandbox desktop looks finished at every geometry people pick (against the real Docker
// engine and the real desktop image): the Xfce panels lie inside the screen and nothing on the
// top panel is cut at its edges (Debian's default panel cut its user menu and squeezed a
// two-line clock at 1280x800), and the pointer comes from a real cursor theme, drawn as an
// arrow (not a block) for a viewer that has Xvnc draw the cursor into the pixels. A PNG of each
// geometry goes to test-output/desktop-<geometry>.png for a person to look at.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenError } from '../../src/core/problem';
import { ScreenController } from '../../src/core/screen';
import SCREENSHOT_SCRIPT from '../../src/core/screenshot.py';
import { readExactly, rfbHandshake } from '../support/rfb';
import { removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';

/** The repository (this file runs as out/test/integration/*.js). */
const REPO_ROOT = join(__dirname, '..', '..', '..');
/** The default, the sizes of common laptop and desktop monitors, and a small one. */
const GEOMETRIES = ['1280x800', '1024x768', '1920x1080', '2560x1440'];

type Rgb = readonly [number, number, number];
interface Pixels {
  readonly at: (x: number, y: number) => Rgb;
}

/**
 * The pixels of one region, read through the screen's RFB socket by a client that asks for the
 * Raw encoding only: without a cursor pseudo-encoding, Xvnc draws the pointer into the pixels.
 */
async function grab(controller: ScreenController, x: number, y: number, w: number, h: number): Promise<Pixels> {
  const relay = controller.openRelay();
  try {
    await rfbHandshake(relay.stdout, relay.stdin, 30_000);
    // SetPixelFormat: 32 bits, little-endian true colour, red/green/blue at bits 16/8/0.
    relay.stdin.write(Buffer.from([0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]));
    relay.stdin.write(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0])); // SetEncodings: Raw
    const request = Buffer.alloc(10);
    request.writeUInt8(3, 0);
    request.writeUInt16BE(x, 2);
    request.writeUInt16BE(y, 4);
    request.writeUInt16BE(w, 6);
    request.writeUInt16BE(h, 8);
    relay.stdin.write(request);
    const pixels = Buffer.alloc(w * h * 4);
    let covered = 0;
    while (covered < w * h) {
      const header = await readExactly(relay.stdout, 4, 30_000);
      assert.equal(header[0], 0, `a FramebufferUpdate, not message type ${header[0]}`);
      for (let r = header.readUInt16BE(2); r > 0; r--) {
        const rect = await readExactly(relay.stdout, 12, 30_000);
        const [rx, ry, rw, rh] = [0, 2, 4, 6].map((o) => rect.readUInt16BE(o));
        assert.equal(rect.readInt32BE(8), 0, 'a Raw rectangle');
        const data = await readExactly(relay.stdout, rw * rh * 4, 60_000);
        for (let j = 0; j < rh; j++) {
          for (let i = 0; i < rw; i++) {
            const [px, py] = [rx + i - x, ry + j - y];
            if (px >= 0 && px < w && py >= 0 && py < h) {
              data.copy(pixels, (py * w + px) * 4, (j * rw + i) * 4, (j * rw + i + 1) * 4);
            }
          }
        }
        covered += rw * rh;
      }
    }
    return { at: (px, py) => [pixels[(py * w + px) * 4 + 2], pixels[(py * w + px) * 4 + 1], pixels[(py * w + px) * 4]] };
  } finally {
    relay.kill();
  }
}

/**
 * Starts the screen; on a machine so loaded that the launcher's exec times out, tries again
 * (twice at most, and says so): what this file checks is the desktop, not how fast it starts.
 */
async function startScreen(controller: ScreenController): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await controller.start();
      return;
    } catch (err) {
      if (attempt === 3 || !(err instanceof ScreenError) || err.problem.code !== 'commandFailed') {
        throw err;
      }
      console.log(`# start attempt ${attempt} failed (${err.message}); trying again`);
      await controller.stop().catch(() => undefined);
    }
  }
}

const same = (a: Rgb, b: Rgb) => a.every((v, i) => Math.abs(v - b[i]) <= 8);
const key = (c: Rgb) => c.join(',');

/** The most common colour of a region: the panel's background. */
function commonest(pixels: Pixels, w: number, h: number): Rgb {
  const counts = new Map<string, { colour: Rgb; n: number }>();
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const colour = pixels.at(x, y);
      const entry = counts.get(key(colour)) ?? { colour, n: 0 };
      entry.n++;
      counts.set(key(colour), entry);
    }
  }
  return [...counts.values()].sort((a, b) => b.n - a.n)[0].colour;
}

/** Columns [from, to) of rows [top, bottom) that hold something other than `background`. */
function inked(pixels: Pixels, background: Rgb, from: number, to: number, top: number, bottom: number): number {
  let n = 0;
  for (let x = from; x < to; x++) {
    for (let y = top; y < bottom; y++) {
      if (!same(pixels.at(x, y), background)) {
        n++;
        break;
      }
    }
  }
  return n;
}

describe('the sandbox desktop', () => {
  // One sandbox for every geometry (the screen restarts in it): a container each would only
  // load the machine.
  const workspaceKey = settings().workspaceKey;
  let config = settings({ workspaceKey, geometry: GEOMETRIES[0] });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(workspaceKey);
  });
  const x11 = (...argv: string[]) => {
    const { sandbox, screen } = controller.status;
    return sh('docker', ['exec', '-u', 'pn', '-e', `DISPLAY=${screen!.env.DISPLAY}`, '-e', `XAUTHORITY=${screen!.env.XAUTHORITY}`,
      '-e', `DBUS_SESSION_BUS_ADDRESS=${screen!.env.DBUS_SESSION_BUS_ADDRESS}`, sandbox!.id, ...argv]);
  };

  for (const geometry of GEOMETRIES) {
    const [width, height] = geometry.split('x').map(Number);
    test(`at ${geometry} its panels lie inside the screen and nothing on the top panel is cut at an edge`, async () => {
      await controller.stop();
      config = settings({ workspaceKey, geometry });
      await startScreen(controller);
      // The panels: xfce4-panel's mapped dock windows (the top bar and the dock at the bottom),
      // without xfce4-panel's 3x3 autohide helper, parked off screen, which is a dock too: it
      // maps before the dock does, so only the real panels count as both being there.
      const boxes = await waitFor(() => {
        const found = x11('xdotool', 'search', '--onlyvisible', '--class', 'xfce4-panel').split('\n').filter(Boolean)
          .filter((id) => x11('xprop', '-id', id, '_NET_WM_WINDOW_TYPE').includes('_NET_WM_WINDOW_TYPE_DOCK'))
          .map((id) => {
            const g = Object.fromEntries(x11('xdotool', 'getwindowgeometry', '--shell', id).trim().split('\n').map((l) => l.split('=')));
            return { x: Number(g.X), y: Number(g.Y), w: Number(g.WIDTH), h: Number(g.HEIGHT) };
          })
          .filter((b) => b.w > 3 && b.h > 3);
        return found.length >= 2 ? found : undefined;
      }, 90_000, 250, 'both Xfce panels to map');
      for (const b of boxes) {
        assert.ok(b.x >= 0 && b.y >= 0 && b.x + b.w <= width && b.y + b.h <= height, `panel ${JSON.stringify(b)} lies inside ${geometry}`);
      }
      const top = boxes.find((b) => b.y === 0 && b.x === 0 && b.w === width);
      assert.ok(top, `a panel spans the top edge: ${JSON.stringify(boxes)}`);
      assert.ok(boxes.some((b) => b.y + b.h === height), `the dock sits on the bottom edge: ${JSON.stringify(boxes)}`);

      // The pointer away from the panel, then the panel's pixels once both ends are drawn (the
      // Applications button at the left, the clock at the right).
      x11('xdotool', 'mousemove', String(Math.round(width / 2)), String(Math.round(height / 2)));
      const quarter = Math.floor(width / 4);
      const { pixels, background } = await waitFor(async () => {
        const p = await grab(controller, 0, 0, width, top.h - 1);
        const bg = commonest(p, width, top.h - 1);
        const drawn = inked(p, bg, 0, quarter, 0, top.h - 1) > 40 && inked(p, bg, width - quarter, width, 0, top.h - 1) > 40;
        return drawn ? { pixels: p, background: bg } : undefined;
      }, 90_000, 500, 'the top panel to draw its Applications button and clock');
      // A picture for a person to look at, taken before the checks so a failure has one too.
      const png = Buffer.from(x11('sh', '-c', `python3 -c "$1" | tail -n +2`, 'screenshot', SCREENSHOT_SCRIPT).trim(), 'base64');
      const dir = join(REPO_ROOT, 'test-output');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `desktop-${geometry}.png`), png);
      // Nothing touches the panel's outer edges: an item cut by the screen's edge (or squeezed
      // out of the panel's height) leaves ink in the outermost columns or the top row.
      const edge = 2;
      assert.equal(inked(pixels, background, 0, edge, 0, top.h - 1), 0, 'nothing is cut at the left edge');
      assert.equal(inked(pixels, background, width - edge, width, 0, top.h - 1), 0, 'nothing is cut at the right edge');
      assert.equal(inked(pixels, background, 0, width, 0, 1), 0, 'nothing is cut at the top edge');
    });

    if (geometry === GEOMETRIES[0]) {
      test('the pointer is Adwaita\'s arrow, for X, GTK and Xfce, and a framebuffer-drawn pointer is an arrow', async () => {
        assert.equal(x11('xfconf-query', '-c', 'xsettings', '-p', '/Gtk/CursorThemeName').trim(), 'Adwaita');
        assert.match(x11('xrdb', '-query'), /^Xcursor\.theme:\s*Adwaita$/m);
        assert.match(x11('sh', '-c', 'echo "$XCURSOR_THEME"'), /^Adwaita$/m);
        const [cx, cy] = [Math.round(width / 2), Math.round(height / 2)];
        // Over the bare desktop, then the region around the pointer as such a viewer sees it.
        x11('xdotool', 'mousemove', String(cx), String(cy));
        const size = 48;
        const [rx, ry] = [cx - size / 2, cy - size / 2];
        const before = await grab(controller, rx, ry, size, size);
        const background = commonest(before, size, size);
        let [minX, minY, maxX, maxY, count, dark, light] = [size, size, -1, -1, 0, 0, 0];
        for (let y = 0; y < size; y++) {
          for (let x = 0; x < size; x++) {
            const c = before.at(x, y);
            if (same(c, background)) continue;
            [minX, minY, maxX, maxY] = [Math.min(minX, x), Math.min(minY, y), Math.max(maxX, x), Math.max(maxY, y)];
            count++;
            const sum = c[0] + c[1] + c[2];
            if (sum < 150) dark++;
            if (sum > 600) light++;
          }
        }
        const [bw, bh] = [maxX - minX + 1, maxY - minY + 1];
        console.log(`# pointer drawn into the framebuffer: ${bw}x${bh} px, ${count} px of it ink (${dark} dark, ${light} light)`);
        assert.ok(count > 0, 'Xvnc draws a pointer into the pixels');
        assert.ok(bw >= 8 && bw <= 32 && bh >= 12 && bh <= 40, `an arrow-sized pointer, not ${bw}x${bh}`);
        assert.ok(count < 0.7 * bw * bh, `an arrow, not a block (${count} of ${bw * bh} px)`);
        assert.ok(dark > 10 && light > 10, `a dark arrow with a light outline (${dark} dark, ${light} light px)`);
      });
    }
  }
});
