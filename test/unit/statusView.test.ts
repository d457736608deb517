// The Screen view's choice of headline, detail and buttons for each status, under plain Node:
// the sentences are injected, so the test sees exactly which words went where.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Placement } from '../../src/core/placement';
import type { Problem } from '../../src/core/problem';
import type { ScreenStatus } from '../../src/core/screen';
import { statusView, type StatusWords } from '../../src/statusView';

const WORDS: StatusWords = {
  problem: (problem) => `problem:${problem.code}`,
  state: (state) => `state:${state}`,
  headline: (placement) => `headline:${placement ? `${placement.where}/${placement.backend}` : 'none'}`,
  imageSwitch: (current, target) => `switch:${current}->${target}`,
};

const SANDBOX: Placement = { where: 'sandbox', backend: 'docker' };
const HOST: Placement = { where: 'host', backend: 'local', why: 'localBackend' };

function view(status: ScreenStatus, inEditor = false) {
  return statusView(status, inEditor, WORDS);
}

describe('statusView', () => {
  test('a running screen offers Stop, and Open in Editor only outside the editor', () => {
    const status: ScreenStatus = { state: 'running', placement: SANDBOX };
    assert.deepEqual(view(status), { state: 'running', stateLabel: 'state:running', headline: 'headline:sandbox/docker', detail: '', actions: ['stop', 'openInEditor'] });
    assert.deepEqual(view(status, true).actions, ['stop']);
  });

  test('starting and stopping offer nothing to press but Open in Editor', () => {
    assert.deepEqual(view({ state: 'starting', placement: SANDBOX }).actions, ['openInEditor']);
    assert.deepEqual(view({ state: 'stopping', placement: SANDBOX }, true).actions, []);
  });

  test('a stopped screen without a problem offers Start, and no Show Logs', () => {
    const shown = view({ state: 'stopped', placement: HOST });
    assert.deepEqual(shown.actions, ['start', 'openInEditor']);
    assert.equal(shown.detail, '');
    assert.equal(shown.headline, 'headline:host/local');
  });

  test('an error offers its fixes first, then Start (Retry is Start, once), then Show Logs', () => {
    const problem: Problem = { code: 'daemonDown', cli: 'docker', detail: 'Cannot connect' };
    const shown = view({ state: 'error', placement: SANDBOX, problem }, true);
    assert.deepEqual(shown.actions, ['startDocker', 'start', 'showLogs']);
    assert.equal(shown.detail, 'problem:daemonDown');
  });

  test('desktop packages missing on this machine: Install desktop first, then Retry as Start, then Show Logs', () => {
    const problem: Problem = { code: 'missingBinaries', names: ['Xvnc'], onHost: true };
    const shown = view({ state: 'error', placement: HOST, problem }, true);
    assert.deepEqual(shown.actions, ['installHostDesktop', 'start', 'showLogs']);
  });


  test('a refused placement offers its fixes and Show Logs, never Start', () => {
    const problem: Problem = { code: 'refused', backend: 'modal' };
    const shown = view({ state: 'refused', placement: { where: 'refused', backend: 'modal' }, problem }, true);
    assert.ok(!shown.actions.includes('start'), JSON.stringify(shown.actions));
    assert.equal(shown.actions.at(-1), 'showLogs');
    assert.ok(shown.actions.length >= 2, 'at least one fix besides Show Logs');
    assert.equal(shown.stateLabel, 'state:refused');
  });

  test('a pending image switch puts Switch and Keep first and adds its sentence after the problem', () => {
    const problem: Problem = { code: 'sandboxGone' };
    const shown = view({ state: 'gone', placement: SANDBOX, problem, imageSwitch: { containerId: 'c0ffee', current: 'old:1', target: 'new:2' } }, true);
    assert.deepEqual(shown.actions.slice(0, 2), ['switchImage', 'keepImage']);
    assert.equal(shown.detail, 'problem:sandboxGone\n\nswitch:old:1->new:2');
    assert.equal(new Set(shown.actions).size, shown.actions.length, 'no button twice');
  });

  test('an unknown backend has no placement: the headline says so', () => {
    assert.equal(view({ state: 'refused', placement: undefined }).headline, 'headline:none');
  });
});
