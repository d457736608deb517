// Control changing hands on the real screen (real Docker, the real desktop image, real Xvnc):
// nothing a viewer held stays pressed for the agent, and a person taking control stops the
// agent's typing at once. Keys are read by a plain X client in the sandbox (test/support/keylog.py)
// that logs each press with the X server's own timestamp (CLOCK_MONOTONIC, shared with the host).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { ActionResult } from '../../src/core/actions/catalog';
import { AgentActionRunner } from '../../src/core/actions/agentActionRunner';
import { LeaseStore } from '../../src/core/lease';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { listenForViewers, type ViewerListener } from '../../src/core/viewerListener';
import KEYLOG from '../support/keylog.py';
import { removeTestContainers, settings, sh, tempMarkers, testLog, waitFor } from '../support/env';
import { rfbHandshake } from '../support/rfb';

const tag = randomBytes(4).toString('hex');
const CONTROL_L = 0xffe3;
const CONTROL_MASK = 1 << 2;
const BUTTON1_MASK = 1 << 8;

/** CLOCK_MONOTONIC in ms, as the X server stamps events (mod 2^32). */
const monotonicMs = () => Number(process.hrtime.bigint() / 1_000_000n);
/** a - b for X server times, across a wrap of the 32-bit ms clock. */
const xDiff = (a: number, b: number) => ((((a - b) % 2 ** 32) + 2 ** 32 + 2 ** 31) % 2 ** 32) - 2 ** 31;

interface Press {
  readonly time: number;
  readonly key: string;
  readonly state: number;
}

describe('control changing hands on a docker sandbox screen', { timeout: 600_000 }, () => {
  const config = settings();
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  const leaseDir = mkdtempSync(join(tmpdir(), 'botscreen-leases-'));
  const lease = new LeaseStore(leaseDir, config.workspaceKey);
  const runner = new AgentActionRunner(controller, lease, testLog);
  let container = '';
  let display: string[] = [];
  let listener: ViewerListener | undefined;
  const sockets: Socket[] = [];

  const inSandbox = (...argv: string[]) => sh('docker', ['exec', '-u', 'pn', container, 'env', ...display, ...argv]);

  /** The X server's pointer/modifier mask and the keycodes down right now. */
  const xState = () => {
    const [mask, ...down] = inSandbox('python3', '-c', KEYLOG, '--state').trim().split(' ');
    return { mask: Number(mask), down: down.filter(Boolean).map(Number) };
  };

  const followers: Array<{ kill(): void }> = [];

  /** Gives the window the focus, as a click of the agent would. */
  async function focus(id: string): Promise<void> {
    inSandbox('xdotool', 'windowactivate', id);
    await waitFor(() => inSandbox('xdotool', 'getactivewindow').trim() === id, 10_000, 50, `window ${id} to have the focus`);
  }

  /**
   * Starts a key logger window with a unique title and gives it the focus. Its log is followed as
   * it grows (one `tail -F` stream, not a poll), so the test sees presses within milliseconds.
   */
  async function keyLogger(name: string): Promise<{ id: string; presses: Press[] }> {
    const title = `${name}-${tag}`;
    const log = `/tmp/keylog-${title}`;
    sh('docker', ['exec', '-u', 'pn', container, 'touch', log]);
    sh('docker', ['exec', '-d', '-u', 'pn', container, 'env', ...display, 'python3', '-c', KEYLOG, title, log]);
    const presses: Press[] = [];
    const tail = spawn('docker', ['exec', container, 'tail', '-n', '+1', '-F', log], { stdio: ['ignore', 'pipe', 'ignore'] });
    followers.push(tail);
    let partial = '';
    tail.stdout.setEncoding('utf8').on('data', (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines.filter(Boolean)) {
        const [time, key, state] = line.split(' ');
        presses.push({ time: Number(time), key, state: Number(state) });
      }
    });
    let id = '';
    await waitFor(() => (id = inSandbox('xdotool', 'search', '--onlyvisible', '--name', `^${title}$`).trim().split('\n')[0]) !== '', 30_000, 50, `window ${title}`);
    await focus(id);
    return { id, presses };
  }

  const done = (result: ActionResult, what: string) => assert.equal(result.status, 'done', `${what}: ${JSON.stringify(result)}`);

  before(async () => {
    await controller.start();
    container = controller.status.sandbox!.id;
    const env = controller.status.screen!.env;
    display = [`DISPLAY=${env.DISPLAY}`, `XAUTHORITY=${env.XAUTHORITY}`];
  });

  after(async () => {
    followers.forEach((f) => f.kill());
    sockets.forEach((s) => s.destroy());
    await listener?.close();
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    rmSync(leaseDir, { recursive: true, force: true });
  });

  test('Ctrl and a button held through a viewer are released when it hands back: the agent\'s "w" arrives as w', async () => {
    // The first connection of a listener is its viewer `<prefix>-1`.
    const viewer = `viewer-${tag}-1`;
    const logger = await keyLogger('held');
    // The external viewer port, wired as the extension wires it (commands/externalViewer.ts).
    listener = await listenForViewers({
      openRelay: () => controller.openRelay(),
      control: {
        holds: (id) => lease.viewerMayInput(id),
        take: (id) => void lease.acquire(id, 'take control'),
        handBack: (id) => void lease.release(id),
      },
      viewerPrefix: `viewer-${tag}`,
    });
    const subscription = lease.onTransition(() => listener?.releaseHeld());
    try {
      const socket = await new Promise<Socket>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port: listener!.port }, () => resolve(s));
        s.once('error', reject);
      });
      sockets.push(socket);
      await rfbHandshake(socket as unknown as Readable, socket);
      socket.resume(); // framebuffer updates are not needed here
      lease.acquire(viewer, 'a person holds Ctrl and the mouse button');

      const key = Buffer.from([4, 1, 0, 0, 0, 0, 0, 0]);
      key.writeUInt32BE(CONTROL_L, 4);
      // The button goes down on the logger's own window, which keeps the focus.
      const geometry = Object.fromEntries(inSandbox('xdotool', 'getwindowgeometry', '--shell', logger.id).trim().split('\n').map((l) => l.split('=')));
      const pointer = Buffer.from([5, 1, 0, 0, 0, 0]);
      pointer.writeUInt16BE(Number(geometry.X) + 20, 2);
      pointer.writeUInt16BE(Number(geometry.Y) + 20, 4);
      socket.write(Buffer.concat([key, pointer]));
      await waitFor(() => (xState().mask & (CONTROL_MASK | BUTTON1_MASK)) === (CONTROL_MASK | BUTTON1_MASK), 10_000, 50, 'Ctrl and button 1 down on the screen');
      const handedBackAt = Date.now();
      lease.release(viewer); // hand back; the viewer sends no key-up (noVNC goes view-only)
      await waitFor(() => (xState().mask & (CONTROL_MASK | BUTTON1_MASK)) === 0, 10_000, 50, 'Ctrl and button 1 released by the gate');
      console.log(`# hand back to Ctrl and button 1 released on the screen: ${Date.now() - handedBackAt} ms (polled)`);
      assert.ok(Date.now() - handedBackAt < 10_000);

      await focus(logger.id);
      done(await runner.perform('type', { text: 'w' }), 'type w');
      await waitFor(() => logger.presses.some((p) => p.key === 'w'), 10_000, 50, 'the w to arrive');
      const w = logger.presses.filter((p) => p.key === 'w');
      assert.equal(w.length, 1);
      assert.equal(w[0].state & CONTROL_MASK, 0, 'w arrived without Ctrl');
      assert.notEqual(inSandbox('xdotool', 'search', '--name', `^held-${tag}$`).trim(), '', 'the window did not close');
    } finally {
      subscription.dispose();
    }
  });

  test('a modifier left down in the X server (not through a viewer) does not change what the agent types', async () => {
    const logger = await keyLogger('stale');
    inSandbox('xdotool', 'keydown', 'Control_L');
    assert.equal(xState().mask & CONTROL_MASK, CONTROL_MASK, 'Ctrl is down');
    done(await runner.perform('type', { text: 'w' }), 'type w');
    await waitFor(() => logger.presses.some((p) => p.key === 'w'), 10_000, 50, 'the w to arrive');
    assert.deepEqual(logger.presses.filter((p) => p.key === 'w').map((p) => p.state & CONTROL_MASK), [0], 'w without Ctrl');
    assert.notEqual(inSandbox('xdotool', 'search', '--name', `^stale-${tag}$`).trim(), '', 'the window did not close');
    done(await runner.perform('key', { chord: 'ctrl+w' }), 'a real ctrl+w');
    await waitFor(() => inSandbox('xdotool', 'search', '--name', `^stale-${tag}$`).trim() === '', 10_000, 50, 'a chord the agent asks for still works');
  });

  for (const [who, taker] of [
    ['in this window', () => lease],
    ['in another window (another process\'s lease store)', () => new LeaseStore(leaseDir, config.workspaceKey)],
  ] as const) {
    test(`a person taking control ${who} stops 5,000 characters of typing: none arrives 100 ms later`, async () => {
      const logger = await keyLogger(who.startsWith('in this') ? 'takeover-here' : 'takeover-other');
      const viewer = `taker-${tag}`;
      const startedAt = monotonicMs();
      const typing = runner.perform('type', { text: 'a'.repeat(5000) });
      // Take control 300 ms after the first character reached the screen.
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (logger.presses.length > 0) {
            clearInterval(timer);
            resolve();
          } else if (monotonicMs() - startedAt > 60_000) {
            clearInterval(timer);
            reject(new Error('typing never began'));
          }
        }, 2);
      });
      const first = logger.presses[0];
      assert.ok(xDiff(first.time, startedAt) >= 0 && xDiff(first.time, monotonicMs()) <= 0, 'the X server and this test share the monotonic clock');
      const wait = 300 - xDiff(monotonicMs(), first.time);
      await new Promise((r) => setTimeout(r, Math.max(0, wait)));
      const takenAt = monotonicMs();
      taker().acquire(viewer, 'a person takes control while the agent types');
      try {
        const result = await typing;
        assert.equal(result.status, 'humanHasControl', JSON.stringify(result));
        assert.equal((result as { discarded: boolean }).discarded, true);
        assert.match((result as { progress?: string }).progress ?? '', /typed .* of 5000 characters before control changed hands/);
        await new Promise((r) => setTimeout(r, 1500)); // anything still on its way arrives meanwhile
        const presses = logger.presses;
        const last = presses.at(-1)!;
        const lastAfter = xDiff(last.time, takenAt);
        const before = presses.filter((p) => xDiff(p.time, takenAt) <= 0).length;
        const justBefore = presses.filter((p) => xDiff(p.time, takenAt) <= 0 && xDiff(p.time, takenAt) > -100).length;
        console.log(`# take control ${who} ${xDiff(takenAt, first.time)} ms after the first character: ${presses.length} characters arrived ` +
          `(${before} before the take-over, ${justBefore} in the 100 ms before it), the last ${lastAfter} ms after it`);
        // The first xdotool run types 1,000 characters, 12 s at least: it was still running.
        assert.ok(before > 0 && presses.length < 1000, 'control was taken in the middle of the first run, which stopped');
        assert.ok(lastAfter <= 100, `the last character arrived ${lastAfter} ms after control was taken (at most 100)`);
        assert.equal(sh('docker', ['exec', container, 'pgrep', '-x', 'xdotool']).trim(), '', 'no xdotool runs on in the sandbox');
        assert.deepEqual(xState().down, [], 'no key stays down (it would auto-repeat into the person\'s window)');
      } finally {
        taker().release(viewer);
      }
    });
  }
});
