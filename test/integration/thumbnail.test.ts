// Thumbnails of a real screen in a real Docker sandbox: a JPEG of the right aspect with real
// content, grabbed without touching the control lease, and never in an agent action's way (an
// action runs to its end while a grab is still in flight; a stuck grab is killed at its timeout).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { decode } from 'jpeg-js';
import { AgentActionRunner } from '../../src/core/actions/agentActionRunner';
import { displayEnv } from '../../src/core/actions/sessionExec';
import { SandboxBackends } from '../../src/core/backends/registry';
import { LeaseStore } from '../../src/core/lease';
import type { Sandbox } from '../../src/core/sandbox';
import { ScreenController } from '../../src/core/screen';
import { grabThumbnail, THUMBNAIL_WIDTH, ThumbnailError } from '../../src/core/thumbnail';
import { removeTestContainers, settings, tempMarkers, testLog, waitFor } from '../support/env';

const WIDTH = 1152;
const HEIGHT = 720;

/** Distinct colours of a decoded RGBA picture, each channel rounded to 4 bits (JPEG noise aside). */
function colours(data: Uint8Array): number {
  const seen = new Set<number>();
  for (let i = 0; i < data.length; i += 4) {
    seen.add(((data[i] >> 4) << 8) | ((data[i + 1] >> 4) << 4) | (data[i + 2] >> 4));
  }
  return seen.size;
}

/** The same sandbox, but every command first sleeps `seconds` in it: a grab that is slow in the sandbox. */
function slowed(sandbox: Sandbox, seconds: number): Sandbox {
  return { ...sandbox, exec: (argv, options) => sandbox.exec(['sh', '-c', `sleep ${seconds}; exec "$@"`, 'sh', ...argv], options) };
}

describe('thumbnails of a docker screen', { timeout: 600_000 }, () => {
  const config = settings({ geometry: `${WIDTH}x${HEIGHT}` });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const leaseDir = fs.mkdtempSync(join(tmpdir(), 'botscreen-leases-'));
  const lease = new LeaseStore(leaseDir, config.workspaceKey);
  const runner = new AgentActionRunner(controller, lease, testLog);

  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    fs.rmSync(leaseDir, { recursive: true, force: true });
  });

  test('a grab is a JPEG of the screen: its aspect, real content; the lease file is not touched', async () => {
    const status = await controller.start();
    assert.equal(status.state, 'running', JSON.stringify(status.problem));
    const running = controller.runningSandbox()!;
    // A lease file that exists (a person took control and handed back), so a write would show.
    lease.acquire('person', 'test');
    lease.release('person');
    const before = fs.statSync(lease.path);
    const bytes = fs.readFileSync(lease.path);

    // The desktop paints its panel and background a moment after the start.
    await waitFor(
      async () => colours(decode((await grabThumbnail(running.sandbox, displayEnv(running.screen))).jpeg, { useTArray: true }).data) > 20,
      60_000,
      500,
      'the desktop to paint',
    );
    const costs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const thumbnail = await grabThumbnail(running.sandbox, displayEnv(running.screen));
      const picture = decode(thumbnail.jpeg, { useTArray: true });
      assert.deepEqual([thumbnail.screenWidth, thumbnail.screenHeight], [WIDTH, HEIGHT]);
      assert.deepEqual([picture.width, picture.height], [thumbnail.width, thumbnail.height], 'the JPEG decodes to its stated size');
      assert.ok(picture.width <= THUMBNAIL_WIDTH && picture.width >= THUMBNAIL_WIDTH * 0.75, `width ${picture.width}`);
      assert.ok(Math.abs(picture.width / picture.height - WIDTH / HEIGHT) < 0.02, `aspect ${picture.width}x${picture.height}`);
      assert.ok(colours(picture.data) > 20, `an Xfce desktop has many colours, got ${colours(picture.data)}`);
      assert.ok(thumbnail.jpeg.length > 2000, `a real picture, ${thumbnail.jpeg.length} bytes`);
      const icon = decode(thumbnail.icon, { useTArray: true });
      assert.equal(icon.width, 32);
      assert.equal(icon.height, Math.round((32 * HEIGHT) / WIDTH));
      costs.push(`${thumbnail.ms} ms, ${thumbnail.wireBytes} B from the sandbox, ${thumbnail.jpeg.length} B JPEG`);
    }
    console.log(`# grabs: ${costs.join('; ')}`);
    const after = fs.statSync(lease.path);
    assert.equal(after.mtimeMs, before.mtimeMs, 'the lease file was not written');
    assert.equal(after.ino, before.ino, 'nor replaced');
    assert.deepEqual(fs.readFileSync(lease.path), bytes);
    assert.ok(!fs.existsSync(lease.lockPath), 'nor locked');
  });

  test('an agent action runs to its end while a grab is in flight (no shared queue or lock)', async () => {
    const running = controller.runningSandbox()!;
    let grabEnded = 0;
    const grabStarted = Date.now();
    const grab = grabThumbnail(slowed(running.sandbox, 4), displayEnv(running.screen)).finally(() => (grabEnded = Date.now()));
    await new Promise((r) => setTimeout(r, 300)); // the grab's exec is under way
    const actionStarted = Date.now();
    const result = await runner.perform('move', { x: 100, y: 120 });
    const actionEnded = Date.now();
    assert.equal(result.status, 'done', JSON.stringify(result));
    assert.equal(grabEnded, 0, 'the grab was still in flight when the action ended');
    await grab;
    console.log(`# move took ${actionEnded - actionStarted} ms while a grab was in flight; the grab took ${grabEnded - grabStarted} ms`);
    assert.ok(actionEnded - actionStarted < 3500, `the action did not wait for the grab (${actionEnded - actionStarted} ms)`);
    assert.ok(grabEnded >= actionEnded);
  });

  test('a stuck grab is killed at its timeout', async () => {
    const running = controller.runningSandbox()!;
    const started = Date.now();
    await assert.rejects(grabThumbnail(slowed(running.sandbox, 30), displayEnv(running.screen), { timeoutMs: 1500 }), (err: unknown) => {
      return err instanceof ThumbnailError && /timed out/.test(err.message);
    });
    const took = Date.now() - started;
    assert.ok(took < 6000, `gave up after ${took} ms`);
  });
});
