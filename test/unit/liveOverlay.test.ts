// The live action overlay's pure parts: where a screen pixel is drawn in each view mode
// (webview/overlayGeometry.ts), and the runner's hook that tells the overlay an action begins
// (src/core/actions/agentActionRunner.ts) — after every check, before its input is sent, and
// never for an action that does not run.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentActionRunner, type ScreenAccess } from '../../src/core/actions/agentActionRunner';
import type { AgentAction } from '../../src/core/actions/catalog';
import { HumanHasControlError, type Lease } from '../../src/core/lease';
import type { Sandbox } from '../../src/core/sandbox';
import type { ScreenStatus } from '../../src/core/screen';
import { boardPercent, relativeBox, viewPoint, type Box } from '../../webview/overlayGeometry';
import { testLog } from '../support/env';

const SCREEN = { width: 1024, height: 640 };

describe('overlay geometry: screen pixel to view', () => {
  test('Fit: the canvas is scaled into the view, the point scales with it', () => {
    // A 1024x640 screen fitted into a 512-wide view, the canvas 40 px below the view's top.
    const canvas: Box = { left: 10, top: 40, width: 512, height: 320 };
    assert.deepEqual(viewPoint({ x: 0, y: 0 }, SCREEN, canvas), { x: 10.25, y: 40.25 });
    assert.deepEqual(viewPoint({ x: 300, y: 200 }, SCREEN, canvas), { x: 10 + 150.25, y: 40 + 100.25 });
    assert.deepEqual(viewPoint({ x: 1023, y: 639 }, SCREEN, canvas), { x: 10 + 511.75, y: 40 + 319.75 });
  });

  test('1:1: one screen pixel per view pixel; scrolled, the canvas box starts before the view', () => {
    const unscrolled: Box = { left: 0, top: 30, width: 1024, height: 640 };
    assert.deepEqual(viewPoint({ x: 300, y: 200 }, SCREEN, unscrolled), { x: 300.5, y: 230.5 });
    // Scrolled 250 px right and 100 px down: the same pixel is drawn that much further up-left.
    const scrolled: Box = { left: -250, top: -70, width: 1024, height: 640 };
    assert.deepEqual(viewPoint({ x: 300, y: 200 }, SCREEN, scrolled), { x: 50.5, y: 130.5 });
  });

  test('Resize: the screen took the view\'s size, so the canvas is drawn 1:1 at its new size', () => {
    const resized = { width: 800, height: 500 };
    assert.deepEqual(viewPoint({ x: 799, y: 0 }, resized, { left: 0, top: 0, width: 800, height: 500 }), { x: 799.5, y: 0.5 });
  });

  test('the board\'s percentages land on the same point as the direct mapping, in every mode', () => {
    const layer: Box = { left: 5, top: 60, width: 600, height: 400 };
    for (const canvas of [
      { left: 5, top: 60, width: 600, height: 375 }, // Fit
      { left: -300, top: -40, width: 1024, height: 640 }, // 1:1, scrolled
    ]) {
      const board = relativeBox(canvas, layer);
      for (const p of [{ x: 0, y: 0 }, { x: 512, y: 320 }, { x: 1023, y: 639 }]) {
        const pct = boardPercent(p, SCREEN);
        const drawn = { x: layer.left + board.left + (pct.x / 100) * board.width, y: layer.top + board.top + (pct.y / 100) * board.height };
        const direct = viewPoint(p, SCREEN, canvas);
        assert.ok(Math.abs(drawn.x - direct.x) < 1e-9 && Math.abs(drawn.y - direct.y) < 1e-9, `${JSON.stringify(p)}: ${JSON.stringify(drawn)} vs ${JSON.stringify(direct)}`);
      }
    }
  });
});

const LEASE = { holder: 'agent', reason: 'test', since: new Date(0).toISOString(), epoch: 1 } as unknown as Lease;
const agentLease = { assertAgentMayAct: () => LEASE, assertAgentStillActs: () => LEASE };

/** A running screen whose sandbox records each exec and runs `true` for it (the action "succeeds"). */
function fakeScreen(events: string[]): ScreenAccess {
  const sandbox: Sandbox = {
    backend: 'docker',
    id: 'fake',
    name: 'fake',
    onHost: false,
    exec: (argv) => {
      events.push(`exec ${argv.includes('click') ? 'click' : argv[0]}`);
      return { command: 'true', args: [] };
    },
  };
  const screen = { display: ':1', pid: 1, socket: '/x', runtimeDir: '/x', geometry: '1024x640', adopted: false, env: {} };
  return {
    status: { state: 'running' } as unknown as ScreenStatus,
    placement: () => undefined,
    start: () => Promise.reject(new Error('not started in this test')),
    runningSandbox: () => ({ sandbox, screen }),
    noteActivity: () => undefined,
  };
}

describe('the runner tells listeners as an action begins', () => {
  test('a click is heard once, with its action, before its input goes to the sandbox', async () => {
    const events: string[] = [];
    const runner = new AgentActionRunner(fakeScreen(events), agentLease, testLog);
    const heard: AgentAction[] = [];
    runner.onAction((action) => {
      heard.push(action);
      events.push(`began ${action.kind}`);
    });
    const result = await runner.perform('click', { x: 300, y: 200 });
    assert.equal(result.status, 'done', JSON.stringify(result));
    assert.deepEqual(heard, [{ kind: 'click', at: { x: 300, y: 200 }, button: 'left', double: false }]);
    assert.deepEqual(events, ['began click', 'exec click']);
  });

  test('refused, invalid or out-of-bounds input is never heard: nothing began', async () => {
    const events: string[] = [];
    const refusing = {
      assertAgentMayAct: (): Lease => {
        throw new HumanHasControlError(LEASE);
      },
      assertAgentStillActs: () => LEASE,
    };
    const heard: AgentAction[] = [];
    const refused = new AgentActionRunner(fakeScreen(events), refusing, testLog);
    refused.onAction((action) => heard.push(action));
    assert.equal((await refused.perform('click', { x: 1, y: 1 })).status, 'humanHasControl');
    const runner = new AgentActionRunner(fakeScreen(events), agentLease, testLog);
    runner.onAction((action) => heard.push(action));
    assert.equal((await runner.perform('click', { x: 'a', y: 1 })).status, 'badInput');
    assert.deepEqual(heard, []);
    assert.deepEqual(events, []);
  });

  test('a wait (no screen needed) is heard too; a failing listener does not stop the action; a disposed one hears nothing', async () => {
    const runner = new AgentActionRunner(fakeScreen([]), agentLease, testLog);
    const heard: string[] = [];
    runner.onAction(() => {
      throw new Error('a broken listener');
    });
    const subscription = runner.onAction((action) => heard.push(action.kind));
    assert.equal((await runner.perform('wait', { seconds: 0.01 })).status, 'done');
    subscription.dispose();
    assert.equal((await runner.perform('wait', { seconds: 0.01 })).status, 'done');
    assert.deepEqual(heard, ['wait']);
  });
});
