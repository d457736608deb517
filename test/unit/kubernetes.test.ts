// No cluster can run here: these tests pin the exact kubectl argv and how its answers are read,
// against a recording stand-in for kubectl.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KubectlCli, KubernetesBackend, parsePodIdentityId, podIdentityId, podRef, type KubernetesSettings } from '../../src/core/backends/kubernetes';
import { ScreenError } from '../../src/core/problem';
import { testLog } from '../support/env';
import { fakeCli } from '../support/fixtures';

function settings(overrides: Partial<KubernetesSettings> = {}): KubernetesSettings {
  return { path: 'kubectl', context: 'kind-dev', namespace: 'agents', pod: 'agent-0', container: 'sandbox', ...overrides };
}

/** A kubectl whose `get pod` prints `phase`, or fails the way kubectl does. */
function fakeKubectl(answer: { phase?: string; stderr?: string; exit?: number }) {
  return fakeCli(
    'kubectl',
    `if [ "$1" = get ]; then
  ${answer.phase !== undefined ? `printf '%s' '${answer.phase}'` : ''}
  ${answer.stderr ? `printf '%s\\n' '${answer.stderr}' >&2` : ''}
  exit ${answer.exit ?? 0}
fi
exit 0`,
  );
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof ScreenError ? err.problem.code : String(err);
  }
}

describe('argv-level: kubernetes', () => {
  const cli = new KubectlCli('kubectl');

  test('argv-level: exec -i with context, namespace, pod, container, then -- and the words untouched', () => {
    const ref = podRef(settings());
    assert.deepEqual(cli.exec(ref, ['python3', '-c', "print('a b')", '-n'], true), {
      command: 'kubectl',
      args: ['exec', '-i', '--context', 'kind-dev', '-n', 'agents', 'agent-0', '-c', 'sandbox', '--', 'python3', '-c', "print('a b')", '-n'],
    });
  });

  test('argv-level: probes drop -i; unset context, namespace and container are left out; never a tty', () => {
    const ref = podRef(settings({ context: '', namespace: '', container: '' }));
    const { args } = cli.exec(ref, ['true'], false);
    assert.deepEqual(args, ['exec', 'agent-0', '--', 'true']);
    assert.ok(![...args, ...cli.exec(ref, ['cat'], true).args].some((a) => a === '-t' || a === '-it' || a === '--tty'));
  });

  test('argv-level: the pod check is kubectl get pod with the phase as jsonpath', () => {
    assert.deepEqual(cli.phase(podRef(settings())).args, ['get', 'pod', '--context', 'kind-dev', '-n', 'agents', 'agent-0', '-o', 'jsonpath={.status.phase}']);
  });

  test('argv-level: pod, namespace, container and context names are validated', () => {
    for (const pod of ['pod;rm -rf /', '$(id)', '`id`', '-n', 'Agent', 'a b', 'a/b', 'a\nb', '.a', 'a-']) {
      assert.equal(codeOf(() => podRef(settings({ pod }))), 'badKubeName', pod);
    }
    assert.equal(codeOf(() => podRef(settings({ pod: '' }))), 'podNotSet');
    assert.equal(codeOf(() => podRef(settings({ pod: 'agent-0.web' }))), 'ok');
    for (const namespace of ['-n', 'a.b', 'A', 'a;b']) {
      assert.equal(codeOf(() => podRef(settings({ namespace }))), 'badKubeName', namespace);
    }
    for (const container of ['-c', 'a b', 'x$(id)']) {
      assert.equal(codeOf(() => podRef(settings({ container }))), 'badKubeName', container);
    }
    for (const context of ['--kubeconfig=/tmp/x', 'a b', 'a\nb']) {
      assert.equal(codeOf(() => podRef(settings({ context }))), 'badKubeName', context);
    }
    assert.equal(codeOf(() => podRef(settings({ context: 'arn:aws:eks:eu-west-1:123456789012:cluster/dev' }))), 'ok');
  });

  test('argv-level: a bad pod name or a missing kubectl is refused and nothing is executed', async () => {
    const kubectl = fakeKubectl({ phase: 'Running' });
    for (const pod of ['pod;touch /tmp/x', '$(touch /tmp/x)', '']) {
      await assert.rejects(new KubernetesBackend(settings({ pod, path: kubectl.path }), testLog).prepare(), (err: unknown) => err instanceof ScreenError);
    }
    assert.deepEqual(kubectl.calls(), []);
    await assert.rejects(
      new KubernetesBackend(settings({ path: '/nonexistent/kubectl' }), testLog).prepare(),
      (err: unknown) => err instanceof ScreenError && err.problem.code === 'cliMissing' && err.problem.cli === '/nonexistent/kubectl',
    );
  });

  test('argv-level: prepare checks the pod and never creates one', async () => {
    const running = fakeKubectl({ phase: 'Running' });
    const sandbox = await new KubernetesBackend(settings({ path: running.path }), testLog).prepare();
    assert.equal(sandbox.backend, 'kubernetes');
    assert.equal(sandbox.name, 'agents/agent-0:sandbox');
    assert.deepEqual(running.calls(), [['get', 'pod', '--context', 'kind-dev', '-n', 'agents', 'agent-0', '-o', 'jsonpath={.status.phase}']]);
    assert.deepEqual(sandbox.exec(['id'], { interactive: true }).args, ['exec', '-i', '--context', 'kind-dev', '-n', 'agents', 'agent-0', '-c', 'sandbox', '--', 'id']);

    const cases: Array<[Parameters<typeof fakeKubectl>[0], string]> = [
      [{ stderr: 'Error from server (NotFound): pods "agent-0" not found', exit: 1 }, 'podNotFound'],
      [{ phase: 'Pending' }, 'podNotRunning'],
      [{ phase: 'Succeeded' }, 'podNotRunning'],
      [{ stderr: 'Unable to connect to the server: dial tcp 10.0.0.1:443: i/o timeout', exit: 1 }, 'commandFailed'],
    ];
    for (const [answer, code] of cases) {
      const kubectl = fakeKubectl(answer);
      await assert.rejects(
        new KubernetesBackend(settings({ path: kubectl.path }), testLog).prepare(),
        (err: unknown) => err instanceof ScreenError && err.problem.code === code,
        code,
      );
      assert.ok(kubectl.calls().every((argv) => argv[0] === 'get'), 'only looked');
    }
  });

  test('argv-level: liveness — Running alive; NotFound, Succeeded, Failed gone; Pending and errors unknown', async () => {
    const sandbox = await new KubernetesBackend(settings({ path: fakeKubectl({ phase: 'Running' }).path }), testLog).prepare();
    const expectations: Array<[Parameters<typeof fakeKubectl>[0], string]> = [
      [{ phase: 'Running' }, 'alive'],
      [{ stderr: 'Error from server (NotFound): pods "agent-0" not found', exit: 1 }, 'gone'],
      [{ phase: 'Failed' }, 'gone'],
      [{ phase: 'Succeeded' }, 'gone'],
      [{ phase: 'Pending' }, 'unknown'],
      [{ stderr: 'error: You must be logged in to the server (Unauthorized)', exit: 1 }, 'unknown'],
    ];
    for (const [answer, liveness] of expectations) {
      const backend = new KubernetesBackend(settings({ path: fakeKubectl(answer).path }), testLog);
      assert.equal(await backend.liveness(sandbox), liveness, JSON.stringify(answer));
    }
  });

  test('argv-level: a marker records the pod; a reload reaches that pod even after the settings moved', async () => {
    const ref = podRef(settings({ context: 'arn:aws:eks:eu-west-1:1:cluster/dev' }));
    assert.deepEqual(parsePodIdentityId(podIdentityId(ref)), ref);
    const kubectl = fakeKubectl({ phase: 'Running' });
    const backend = new KubernetesBackend(settings({ pod: 'new-pod', path: kubectl.path }), testLog);
    const sandbox = await backend.fromIdentity({ backend: 'kubernetes', id: podIdentityId(ref), name: 'x' });
    assert.deepEqual(sandbox.exec(['true'], { interactive: false }).args, [
      'exec', '--context', 'arn:aws:eks:eu-west-1:1:cluster/dev', '-n', 'agents', 'agent-0', '-c', 'sandbox', '--', 'true',
    ]);
    assert.deepEqual(kubectl.calls(), [], 'fromIdentity runs nothing');
    for (const id of ['k8s:a/b/$(id)/c', 'k8s:%ZZ/a/b/c', 'k8s:--x/ns/pod/', 'other']) {
      await assert.rejects(backend.fromIdentity({ backend: 'kubernetes', id, name: '' }), (err: unknown) => err instanceof ScreenError, id);
    }
  });
});
