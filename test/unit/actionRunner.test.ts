// The action runner (src/core/action.py) and the argv it runs: an agent's xdotool action releases
// the modifiers first and can be stopped at once, its whole process group killed. Runs the real
// script with this machine's python3 on plain processes (the X side is tested in the sandbox by
// test/integration/control-handover.test.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ACTION_SCRIPT, ACTION_STOPPED, CLEARED_MODIFIERS, clickArgv, keyArgv, stoppableArgv, typeArgv } from '../../src/core/actions/xdotool';
import { runStoppable } from '../../src/core/runner';

test('every xdotool action releases Control, Shift, Alt and Super before it acts, in the same xdotool run', () => {
  for (const argv of [typeArgv('w'), keyArgv('ctrl+w'), clickArgv({ at: { x: 1, y: 2 }, button: 'left', double: false }, { width: 10, height: 10 })]) {
    const wrapped = stoppableArgv(argv);
    assert.deepEqual(wrapped.slice(0, 3), ['python3', '-c', ACTION_SCRIPT]);
    assert.deepEqual(wrapped.slice(3), ['xdotool', 'keyup', ...CLEARED_MODIFIERS, ...argv.slice(1)], 'keyup first, then the action');
  }
  for (const modifier of ['Control_L', 'Control_R', 'Shift_L', 'Shift_R', 'Alt_L', 'Alt_R', 'Super_L', 'Super_R']) {
    assert.ok(CLEARED_MODIFIERS.includes(modifier), modifier);
  }
  assert.throws(() => stoppableArgv(['sh', '-c', 'true']), TypeError);
});

/** Resolves once `path` exists (python's start alone can take seconds on a loaded machine). */
async function appears(path: string): Promise<void> {
  const until = Date.now() + 30_000;
  while (!existsSync(path)) {
    assert.ok(Date.now() < until, `${path} never appeared`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function runner(argv: string[]) {
  return runStoppable({ command: 'python3', args: ['-c', ACTION_SCRIPT, ...argv] }, { timeoutMs: 20_000, stopGraceMs: 5000 });
}

test('the action\'s own exit status passes through', async () => {
  assert.equal((await runner(['sh', '-c', 'exit 3']).result).exitCode, 3);
  assert.equal((await runner(['true']).result).exitCode, 0);
  assert.equal((await runner(['sh', '-c', 'kill -TERM $$']).result).exitCode, 128 + 15);
});

test('a stop kills the action and every process it started at once, not just the runner\'s client', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-action-'));
  try {
    const mark = join(dir, 'late');
    // The action and a child of it would each leave a file behind if they outlived the stop.
    const running = runner(['sh', '-c', `(sleep 3; touch ${mark}.child) & touch ${mark}.started; sleep 3; touch ${mark}.action`]);
    await appears(`${mark}.started`);
    const stoppedAt = Date.now();
    running.stop();
    const result = await running.result;
    const took = Date.now() - stoppedAt;
    assert.equal(result.exitCode, ACTION_STOPPED);
    assert.ok(took < 1500, `stopped in ${took} ms, not when the action would have ended`);
    console.log(`# stopped in ${took} ms`);
    await new Promise((r) => setTimeout(r, 3500));
    assert.equal(existsSync(`${mark}.action`), false, 'the action did not go on');
    assert.equal(existsSync(`${mark}.child`), false, 'nor did a process it started');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the end of stdin (its client died) stops the action too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-action-'));
  try {
    const child = spawn('python3', ['-c', ACTION_SCRIPT, 'sh', '-c', `touch ${dir}/started; exec sleep 30`], { stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await appears(join(dir, 'started'));
    const started = Date.now();
    child.stdin.end();
    assert.equal(await exited, ACTION_STOPPED);
    assert.ok(Date.now() - started < 5000, 'long before the 30 s sleep would end');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
