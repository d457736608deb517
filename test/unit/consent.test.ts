// The decisions a start must not take alone (src/core/consent.ts), and the controller's refusals
// that need no real sandbox: Restricted Mode runs nothing, an agent is never asked for a new SSH
// host. Programs are recording stand-ins, so "never ran" is checked, not assumed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  approveHost,
  approveReplacement,
  cannotAsk,
  imageDecision,
  type ConsentAnswer,
  type HostMemory,
  type StartConsent,
  type StartQuestion,
} from '../../src/core/consent';
import { AgentActionRunner } from '../../src/core/actions/agentActionRunner';
import type { Lease } from '../../src/core/lease';
import { ScreenError, type Problem } from '../../src/core/problem';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { settings, tempMarkers, testLog } from '../support/env';
import { fakeCli } from '../support/fixtures';

function memory(): HostMemory & { list: string[] } {
  const list: string[] = [];
  return { list, has: (h) => list.includes(h), add: (h) => void list.push(h) };
}

/** A consent that answers `answer` and records every question. */
function answering(answer: ConsentAnswer, hosts: HostMemory = memory()): StartConsent & { asked: StartQuestion[] } {
  const asked: StartQuestion[] = [];
  return {
    asked,
    hosts,
    ask: async (q) => {
      asked.push(q);
      return answer;
    },
  };
}

function problemOf(err: unknown): Problem {
  assert.ok(err instanceof ScreenError, `a ScreenError, not ${String(err)}`);
  return err.problem;
}

const replace = { kind: 'replaceContainer', backend: 'docker', container: 'botscreen-k', currentImage: 'old:1', image: 'new:2' } as const;

describe('replacing our container', () => {
  test('the decision table: replace only for the user\'s image, ask for the workspace\'s, else reuse', () => {
    assert.equal(imageDecision('a', 'a', 'user'), 'reuse');
    assert.equal(imageDecision('a', 'a', 'workspace'), 'reuse');
    assert.equal(imageDecision(undefined, 'b', 'user'), 'reuse', 'an unreadable image never replaces');
    assert.equal(imageDecision(undefined, 'b', 'workspace'), 'reuse');
    assert.equal(imageDecision('a', 'b', 'user'), 'replace');
    assert.equal(imageDecision('a', 'b', 'workspace'), 'ask');
    assert.equal(imageDecision('a', 'b', 'default'), 'reuse', 'an unpinned default is the Switch/Keep question');
  });

  test('the user\'s own image replaces without a question', async () => {
    const consent = answering('cancel');
    assert.equal(await approveReplacement(consent, 'user', replace), true);
    assert.equal(consent.asked.length, 0);
  });

  test('the same image is never a question', async () => {
    const consent = answering('cancel');
    assert.equal(await approveReplacement(consent, 'workspace', { ...replace, currentImage: 'new:2' }), false);
    assert.equal(consent.asked.length, 0);
  });

  test('a workspace image asks, naming the container and both images; yes replaces, keep reuses', async () => {
    const yes = answering('yes');
    assert.equal(await approveReplacement(yes, 'workspace', replace), true);
    assert.deepEqual(yes.asked, [replace]);
    const keep = answering('keep');
    assert.equal(await approveReplacement(keep, 'workspace', replace), false);
    assert.equal(keep.asked.length, 1);
  });

  test('cancel, or nobody to ask (an agent), refuses: needsConsent, declined only when a person said no', async () => {
    await assert.rejects(approveReplacement(answering('cancel'), 'workspace', replace), (err) => {
      assert.deepEqual(problemOf(err), { code: 'needsConsent', question: replace, declined: true });
      return true;
    });
    await assert.rejects(approveReplacement(cannotAsk(), 'workspace', replace), (err) => {
      assert.deepEqual(problemOf(err), { code: 'needsConsent', question: replace, declined: false });
      return true;
    });
  });
});

describe('a new SSH host', () => {
  const host = 'ssh://pn@build.example:2222';

  test('a host from the user settings is never a question', async () => {
    const consent = answering('cancel');
    await approveHost(consent, host, false);
    assert.equal(consent.asked.length, 0);
  });

  test('a workspace host asks once; the yes is remembered', async () => {
    const hosts = memory();
    const first = answering('yes', hosts);
    await approveHost(first, host, true);
    assert.deepEqual(first.asked, [{ kind: 'newHost', host }]);
    assert.deepEqual(hosts.list, [host]);
    const again = answering('cancel', hosts);
    await approveHost(again, host, true);
    assert.equal(again.asked.length, 0, 'an approved host is not asked about again');
    const other = answering('cancel', hosts);
    await assert.rejects(approveHost(other, 'ssh://evil.example', true));
    assert.equal(other.asked.length, 1, 'another host is a new question');
  });

  test('an agent is refused and nothing is remembered; a person\'s no is not remembered either', async () => {
    const hosts = memory();
    await assert.rejects(approveHost(cannotAsk(hosts), host, true), (err) => {
      assert.deepEqual(problemOf(err), { code: 'needsConsent', question: { kind: 'newHost', host }, declined: false });
      return true;
    });
    await assert.rejects(approveHost(answering('cancel', hosts), host, true), (err) => problemOf(err).code === 'needsConsent');
    assert.deepEqual(hosts.list, []);
  });
});

describe('the controller', () => {
  test('in Restricted Mode attach, start and stop run no program at all', async () => {
    const docker = fakeCli('docker', 'exit 0');
    const controller = new ScreenController(new SandboxBackends(), () => settings({ docker: { cli: docker.path } }), testLog, tempMarkers(), { trusted: () => false });
    try {
      await controller.attach();
      assert.equal(controller.status.state, 'blocked');
      assert.deepEqual(controller.status.problem, { code: 'untrusted' });
      await assert.rejects(controller.start(async () => 'yes'), (err) => problemOf(err).code === 'untrusted');
      await controller.stop();
      assert.deepEqual(docker.calls(), [], 'the docker CLI was never run');
    } finally {
      controller.dispose();
    }
  });

  test('in Restricted Mode every agent tool is refused with the untrusted problem and runs nothing', async () => {
    const docker = fakeCli('docker', 'exit 0');
    const controller = new ScreenController(new SandboxBackends(), () => settings({ docker: { cli: docker.path } }), testLog, tempMarkers(), { trusted: () => false });
    const lease = { holder: 'agent', reason: 'test', since: new Date(0).toISOString(), epoch: 1 } as unknown as Lease;
    const runner = new AgentActionRunner(controller, { assertAgentMayAct: () => lease, assertAgentStillActs: () => lease }, testLog);
    try {
      for (const [kind, input] of [['screenshot', {}], ['click', { x: 1, y: 1 }], ['type', { text: 'x' }], ['openUrl', { url: 'https://example.com/' }]] as const) {
        const result = await runner.perform(kind, input);
        assert.equal(result.status, 'problem', JSON.stringify(result));
        assert.deepEqual((result as { problem: Problem }).problem, { code: 'untrusted' });
      }
      assert.deepEqual(docker.calls(), [], 'the docker CLI was never run');
    } finally {
      controller.dispose();
    }
  });

  test('an agent\'s start on a workspace SSH host is refused before ssh runs; a person\'s yes goes ahead', async () => {
    const ssh = fakeCli('ssh', 'exit 255');
    const hosts = memory();
    const config = settings({ backend: 'ssh', backendRaw: 'ssh', ssh: { host: 'build.example', user: 'pn', path: ssh.path, hostFromWorkspace: true } });
    const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers(), { hosts });
    try {
      await controller.attach();
      assert.deepEqual(ssh.calls(), [], 'opening the window does not contact a workspace host');
      await assert.rejects(controller.start(), (err) => {
        const problem = problemOf(err);
        return problem.code === 'needsConsent' && !problem.declined && problem.question.kind === 'newHost' && problem.question.host === 'ssh://pn@build.example';
      });
      assert.equal(controller.status.state, 'stopped', 'a refusal leaves the screen as it was');
      assert.deepEqual(ssh.calls(), [], 'ssh never ran for the agent');
      // The person approves: now ssh runs (and fails, there is no such host), and the yes is kept.
      await assert.rejects(controller.start(async () => 'yes'), (err) => problemOf(err).code === 'sshFailed');
      assert.ok(ssh.calls().length > 0, 'ssh ran after the yes');
      assert.deepEqual(hosts.list, ['ssh://pn@build.example']);
    } finally {
      controller.dispose();
    }
  });
});
