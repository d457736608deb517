// The screen's size after a person's "Resize the screen to the view", against a real Docker engine
// and the real desktop image: the size goes back to the started geometry when control returns to
// the agent (ResizeRestore, as each Screen viewer runs it), the agent's first action waits for
// that, and an agent click at a target found in the agent's screenshot lands on that target
// (checked by an X client in the sandbox that logs where its button presses arrive). The resize
// itself is made with RandR here, as Xvnc makes it for a viewer's SetDesktopSize; the viewer's
// own path (noVNC, the input gate, Xvnc) is test/ui/view-modes.test.mjs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { after, describe, test } from 'node:test';
import type { ActionResult } from '../../src/core/actions/catalog';
import { AgentActionRunner } from '../../src/core/actions/agentActionRunner';
import { ResizeRestore, restoreSizeArgv } from '../../src/core/actions/screenSize';
import { LeaseStore, viewerHolds } from '../../src/core/lease';
import { RfbInputGate } from '../../src/core/rfbInputGate';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import CLICKLOG from '../support/clicklog.py';
import { removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';

const WIDTH = 1152;
const HEIGHT = 720;
const TARGET = 0xd81b60; // a colour the Xfce desktop does not use
const PERSON = 'person-view';

/** The pixels of a PNG that the screenshot script wrote (8-bit RGB, filter 0 on every row). */
function pixels(png: Uint8Array): { width: number; height: number; at(x: number, y: number): number } {
  const buf = Buffer.from(png);
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  assert.equal(buf[25], 2, 'RGB');
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length; at += 12 + buf.readUInt32BE(at)) {
    if (buf.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(buf.subarray(at + 8, at + 8 + buf.readUInt32BE(at)));
  }
  const raw = inflateSync(Buffer.concat(idat));
  return {
    width,
    height,
    at: (x, y) => {
      const i = y * (1 + width * 3) + 1 + x * 3;
      return (raw[i] << 16) | (raw[i + 1] << 8) | raw[i + 2];
    },
  };
}

/** The bounding box of every pixel of `colour` in a screenshot, or undefined. */
function findColour(png: Uint8Array, colour: number) {
  const image = pixels(png);
  let box: { left: number; top: number; right: number; bottom: number } | undefined;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      if (image.at(x, y) === colour) {
        box = box
          ? { left: Math.min(box.left, x), top: Math.min(box.top, y), right: Math.max(box.right, x), bottom: Math.max(box.bottom, y) }
          : { left: x, top: y, right: x, bottom: y };
      }
    }
  }
  return box;
}

describe('the screen size after a person resized it', { timeout: 600_000 }, () => {
  const config = settings({ geometry: `${WIDTH}x${HEIGHT}` });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const leaseDir = mkdtempSync(join(tmpdir(), 'botscreen-leases-'));
  const lease = new LeaseStore(leaseDir, config.workspaceKey);
  const runner = new AgentActionRunner(controller, lease, testLog);

  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    rmSync(leaseDir, { recursive: true, force: true });
  });

  const done = (result: ActionResult, what: string) => {
    assert.equal(result.status, 'done', `${what}: ${JSON.stringify(result)}`);
    return result as Extract<ActionResult, { status: 'done' }>;
  };

  test('hand back restores the started size before the agent acts, and an agent click lands on what its screenshot showed', async () => {
    done(await runner.perform('screenshot', {}), 'the first screenshot (starts the screen)');
    const container = controller.status.sandbox!.id;
    const screen = controller.status.screen!;
    const display = [`DISPLAY=${screen.env.DISPLAY ?? screen.display}`, ...(screen.env.XAUTHORITY ? [`XAUTHORITY=${screen.env.XAUTHORITY}`] : [])];
    const inSandbox = (...argv: string[]) => sh('docker', ['exec', '-u', 'pn', container, 'env', ...display, ...argv]);
    const xSize = () => /dimensions:\s+(\d+x\d+) pixels/.exec(inSandbox('xdpyinfo'))?.[1];
    assert.equal(xSize(), `${WIDTH}x${HEIGHT}`);

    // A person takes control and their view resizes the screen: the gate lets the SetDesktopSize
    // through (so the viewer knows to restore), and Xvnc changes the screen through RandR.
    lease.acquire(PERSON, 'a person took control in the test');
    const gate = new RfbInputGate(() => viewerHolds(lease.read(), PERSON));
    gate.push(Buffer.from('RFB 003.008\n\x01\x01', 'latin1'));
    const setDesktopSize = Buffer.alloc(24);
    setDesktopSize.writeUInt8(251, 0);
    setDesktopSize.writeUInt16BE(1000, 2);
    setDesktopSize.writeUInt16BE(600, 4);
    setDesktopSize.writeUInt8(1, 6);
    setDesktopSize.writeUInt16BE(1000, 16);
    setDesktopSize.writeUInt16BE(600, 18);
    assert.equal(Buffer.concat(gate.push(setDesktopSize).forward).length, 24, 'SetDesktopSize passes with control');
    const restore = new ResizeRestore(() => controller.runningSandbox(), testLog);
    restore.noteGate(gate);
    inSandbox(...restoreSizeArgv({ width: 1000, height: 600 }));
    assert.equal(xSize(), '1000x600', 'the person resized the screen');
    assert.equal((await runner.perform('screenshot', {})).status, 'humanHasControl', 'the agent waits its turn');

    // Hand back; the agent's screenshot at once sees the started size, not the person's.
    restore.onControl(lease.release(PERSON));
    const shot = done(await runner.perform('screenshot', {}), 'the screenshot right after the hand back');
    assert.deepEqual(shot.size, { width: WIDTH, height: HEIGHT }, 'the agent acted on the restored size');
    assert.equal(xSize(), `${WIDTH}x${HEIGHT}`);
    assert.equal(findColour(shot.screenshot!.png, TARGET), undefined, 'the target colour is not on the desktop yet');

    // A target where the person's smaller screen had no pixels: found in the agent's screenshot, clicked.
    const log = `/tmp/clicks-${config.workspaceKey}`;
    sh('docker', ['exec', '-d', '-u', 'pn', container, 'env', ...display, 'python3', '-c', CLICKLOG, TARGET.toString(16), '1030', '640', '90', '50', log]);
    await waitFor(() => sh('docker', ['exec', container, 'cat', log]).includes('mapped'), 15_000, 100, 'the target window');
    const box = await waitFor(async () => findColour(done(await runner.perform('screenshot', {}), 'screenshot').screenshot!.png, TARGET), 10_000, 200, 'the target in a screenshot');
    assert.deepEqual(box, { left: 1030, top: 640, right: 1119, bottom: 689 }, 'the screenshot shows the target where it is');
    const at = { x: Math.round((box.left + box.right) / 2), y: Math.round((box.top + box.bottom) / 2) };
    done(await runner.perform('click', at), 'the click');
    const clicks = await waitFor(() => sh('docker', ['exec', container, 'cat', log]).split('\n').filter((l) => /^\d+ \d+ \d+$/.test(l)).join('\n'), 10_000, 100, 'the click on the target');
    assert.equal(clicks, `1 ${at.x} ${at.y}`, 'the click landed on the target, where the screenshot showed it');
  });
});
