// The screen marker is a file on disk that anyone able to write there could have edited: every
// field is validated before use, and a crafted identity (an option such as `--privileged`)
// never reaches an argv. The Docker CLI here is a recording stand-in, so that what would be run
// can be inspected; the real `docker exec -- ID` form is exercised by the integration tests.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Logger } from '../../src/core/logger';
import { markerProblem, type Marker } from '../../src/core/marker';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { settings, tempMarkers } from '../support/env';
import { fakeCli } from '../support/fixtures';

const ID = 'a'.repeat(64);

function valid(workspaceKey: string): Marker {
  return {
    version: 1,
    workspaceKey,
    placement: { where: 'sandbox', backend: 'docker' },
    sandbox: { backend: 'docker', id: ID, name: `botscreen-${workspaceKey}` },
    display: ':42',
    runtimeDir: '/tmp/botscreen-1000/k',
    socket: '/tmp/botscreen-1000/k/rfb.sock',
    pid: 4242,
    geometry: '1280x800',
    startedAt: '2026-01-01T00:00:00.000Z',
  };
}

type Edit = (m: Record<string, unknown>) => void;
const sandboxOf = (m: Record<string, unknown>) => m.sandbox as Record<string, unknown>;

/** Crafted markers: each must be refused, naming what is wrong. */
const CRAFTED: Array<[string, Edit, RegExp]> = [
  ['a container id that is an option', (m) => (sandboxOf(m).id = '--privileged'), /bad docker sandbox id "--privileged"/],
  ['a container id with a user switch', (m) => (sandboxOf(m).id = '-u root'), /bad docker sandbox id "-u root"/],
  ['a container id of 11 hex digits', (m) => (sandboxOf(m).id = 'a'.repeat(11)), /bad docker sandbox id/],
  ['a container id of 65 hex digits', (m) => (sandboxOf(m).id = 'a'.repeat(65)), /bad docker sandbox id/],
  ['an upper-case container id', (m) => (sandboxOf(m).id = 'A'.repeat(64)), /bad docker sandbox id/],
  ['a container id with a newline', (m) => (sandboxOf(m).id = `${ID}\n`), /bad docker sandbox id/],
  ['a container name that is an option', (m) => (sandboxOf(m).name = '--rm'), /or name "--rm"/],
  ['a container name with a space', (m) => (sandboxOf(m).name = 'a b'), /or name "a b"/],
  ['a sandbox backend other than the placement', (m) => (sandboxOf(m).backend = 'podman'), /bad sandbox/],
  ['an unknown sandbox field', (m) => (sandboxOf(m).user = 'root'), /unknown sandbox field "user"/],
  ['an unknown field', (m) => (m.privileged = true), /unknown field "privileged"/],
  ['an unknown placement', (m) => (m.placement = { where: 'sandbox', backend: 'modal' }), /bad placement/],
  ['a placement with an extra field', (m) => (m.placement = { where: 'sandbox', backend: 'docker', extra: 1 }), /bad placement/],
  ['a host screen naming a container', (m) => (m.placement = { where: 'host', backend: 'docker', why: 'gatewayOptIn' }), /bad docker sandbox id/],
  ['an apptainer instance that is an option', (m) => {
    m.placement = { where: 'sandbox', backend: 'apptainer' };
    m.sandbox = { backend: 'apptainer', id: '--writable', name: '--writable' };
  }, /bad apptainer sandbox id "--writable"/],
  ['an ssh destination that is an option', (m) => {
    m.placement = { where: 'sandbox', backend: 'ssh' };
    m.sandbox = { backend: 'ssh', id: 'ssh://-oProxyCommand=id', name: 'x' };
  }, /bad ssh sandbox id/],
  ['a pod that is an option', (m) => {
    m.placement = { where: 'sandbox', backend: 'kubernetes' };
    m.sandbox = { backend: 'kubernetes', id: 'k8s:/ns/--all/', name: 'x' };
  }, /bad kubernetes sandbox id/],
  ['a display that is not one', (m) => (m.display = ':1;id'), /bad display/],
  ['a relative socket path', (m) => (m.socket = 'rfb.sock'), /bad socket path/],
  ['a socket path with a control character', (m) => (m.socket = '/tmp/a\u001b[2Jb'), /bad socket path/],
  ['a pid of 0', (m) => (m.pid = 0), /bad pid/],
  ['a pid as a string', (m) => (m.pid = '42'), /bad pid/],
  ['a fractional pid', (m) => (m.pid = 4.5), /bad pid/],
  ['a garbled geometry', (m) => (m.geometry = '1280x800 -x'), /bad geometry/],
  ['a garbled start time', (m) => (m.startedAt = 'yesterday'), /bad start time/],
  ['another version', (m) => (m.version = 2), /unknown version 2/],
  ['another workspace', (m) => (m.workspaceKey = 'other'), /another workspace/],
];

describe('markers are validated before use', () => {
  test('what a start writes is accepted, for every backend form', () => {
    const m = valid('k');
    assert.equal(markerProblem(m, 'k'), undefined);
    assert.equal(markerProblem({ ...m, sandbox: { ...m.sandbox, id: 'b'.repeat(12) } }, 'k'), undefined, 'a short id');
    const host = { ...m, placement: { where: 'host', backend: 'local', why: 'localBackend' }, sandbox: { backend: 'local', id: 'host', name: 'host' } };
    assert.equal(markerProblem(host, 'k'), undefined);
    const apptainer = { ...m, placement: { where: 'sandbox', backend: 'apptainer' }, sandbox: { backend: 'apptainer', id: 'botscreen_k', name: 'botscreen_k' } };
    assert.equal(markerProblem(apptainer, 'k'), undefined);
    const ssh = { ...m, placement: { where: 'sandbox', backend: 'ssh' }, sandbox: { backend: 'ssh', id: 'ssh://agent@[::1]:2222', name: 'agent@::1:2222' } };
    assert.equal(markerProblem(ssh, 'k'), undefined);
    const pod = { ...m, placement: { where: 'sandbox', backend: 'kubernetes' }, sandbox: { backend: 'kubernetes', id: 'k8s:kind-dev/agents/agent-0/sandbox', name: 'agents/agent-0:sandbox' } };
    assert.equal(markerProblem(pod, 'k'), undefined);
  });

  for (const [name, edit, problem] of CRAFTED) {
    test(`refused: ${name}`, () => {
      const m = structuredClone(valid('k')) as unknown as Record<string, unknown>;
      edit(m);
      assert.match(markerProblem(m, 'k') ?? 'accepted', problem);
    });
  }

  test('a crafted marker is ignored with a log line, and its identity never reaches an argv', async () => {
    // A Docker stand-in that answers like a daemon with no containers of ours.
    const docker = fakeCli('docker', 'case "$1" in version) echo 27.0 ;; ps) ;; *) exit 1 ;; esac');
    for (const [name, edit] of CRAFTED.slice(0, 8)) {
      const config = settings({ docker: { cli: docker.path } });
      const markers = tempMarkers();
      const m = structuredClone(valid(config.workspaceKey)) as unknown as Record<string, unknown>;
      edit(m);
      writeFileSync(markers.path(config.workspaceKey), JSON.stringify(m));
      const warnings: string[] = [];
      const log: Logger = { debug: () => undefined, info: () => undefined, warn: (w) => warnings.push(w), error: (e) => warnings.push(e) };
      const controller = new ScreenController(new SandboxBackends(), () => config, log, markers);
      try {
        await controller.attach();
      } finally {
        controller.dispose();
      }
      assert.ok(
        warnings.some((w) => w.includes(markers.path(config.workspaceKey)) && /not a usable Bot Screen marker/.test(w)),
        `${name}: a log line names the marker and why (${JSON.stringify(warnings)})`,
      );
      const crafted = String(sandboxOf(m).id);
      assert.ok(!docker.calls().some((argv) => argv.includes(crafted)), `${name}: ${JSON.stringify(crafted)} reached no argv`);
      assert.notEqual(controller.status.state, 'running');
    }
    assert.ok(docker.calls().length > 0, 'the stand-in was asked (the settings were used instead)');
  });

  test('a valid marker is used, and its id follows `--` in every docker argv', async () => {
    const docker = fakeCli(
      'docker',
      `case "$1" in
  version) echo 27.0 ;;
  inspect) echo "${ID} true" ;;
  exec) case " $* " in
      *" id -u pn "*) echo 1000 ;;
      *) cat >/dev/null; printf 'DISPLAY=:42\\nBOTSCREEN_PID=4242\\nBOTSCREEN_SOCKET=/tmp/r/rfb.sock\\nBOTSCREEN_RUNTIME_DIR=/tmp/r\\nBOTSCREEN_GEOMETRY=1280x800\\nBOTSCREEN_ADOPTED=1\\n' ;;
    esac ;;
  *) exit 1 ;;
esac`,
    );
    const config = settings({ docker: { cli: docker.path } });
    const markers = tempMarkers();
    markers.write(valid(config.workspaceKey));
    const controller = new ScreenController(new SandboxBackends(), () => config, { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined }, markers);
    try {
      await controller.attach();
      assert.equal(controller.status.state, 'running');
      assert.equal(controller.status.sandbox?.id, ID);
    } finally {
      controller.dispose();
    }
    const uses = docker.calls().filter((argv) => argv.includes(ID));
    assert.ok(uses.some((argv) => argv[0] === 'exec') && uses.some((argv) => argv[0] === 'inspect'));
    for (const argv of uses) {
      assert.equal(argv[argv.indexOf(ID) - 1], '--', `-- before the id in ${JSON.stringify(argv)}`);
    }
  });
});
