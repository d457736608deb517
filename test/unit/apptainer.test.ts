// Apptainer cannot run here (no binary, no setuid/userns setup): these tests pin the exact argv
// and the re-attach logic against a recording stand-in for the CLI.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApptainerBackend, ApptainerCli, instanceName, type ApptainerSettings } from '../../src/core/backends/apptainer';
import { ScreenError } from '../../src/core/problem';
import { ScreenController } from '../../src/core/screen';
import { settings as screenSettings, tempMarkers, testLog } from '../support/env';
import { fakeCli } from '../support/fixtures';

function settings(overrides: Partial<ApptainerSettings> = {}): ApptainerSettings {
  return { path: 'apptainer', image: '/images/desktop.sif', instance: '', ...overrides };
}

/** A stand-in whose `instance list --json` reports `running` and whose exec prints a live screen. */
function fakeApptainer(running: string[]) {
  const list = JSON.stringify({ instances: running.map((name, i) => ({ instance: name, pid: 100 + i, img: '/images/desktop.sif', ip: '', logErrPath: '', logOutPath: '' })) });
  return fakeCli(
    'apptainer',
    `case "$1 $2" in
  "instance list") printf '%s\\n' '${list}' ;;
  "instance start") exit 0 ;;
  exec\\ instance://*) cat >/dev/null; printf 'DISPLAY=:42\\nBOTSCREEN_PID=4242\\nBOTSCREEN_SOCKET=/tmp/rdir/rfb.sock\\nBOTSCREEN_RUNTIME_DIR=/tmp/rdir\\nBOTSCREEN_GEOMETRY=1280x800\\nBOTSCREEN_ADOPTED=1\\n' ;;
  *) exit 64 ;;
esac`,
  );
}

describe('argv-level: apptainer', () => {
  const cli = new ApptainerCli('apptainer');

  test('argv-level: exec runs argv in the instance, words untouched, no shell', () => {
    assert.deepEqual(cli.exec('botscreen_abc', ['python3', '-c', "print('a b')", '$HOME']), {
      command: 'apptainer',
      args: ['exec', 'instance://botscreen_abc', 'python3', '-c', "print('a b')", '$HOME'],
    });
    assert.equal(new ApptainerCli('singularity').exec('x', ['true']).command, 'singularity');
  });

  test('argv-level: an instance starts contained, without home, on a writable tmpfs, image after --', () => {
    assert.deepEqual(cli.start('docker://botscreen/sandbox:desktop', 'botscreen_abc').args, [
      'instance', 'start', '--containall', '--no-home', '--writable-tmpfs', '--', 'docker://botscreen/sandbox:desktop', 'botscreen_abc',
    ]);
    assert.deepEqual(cli.list().args, ['instance', 'list', '--json']);
  });

  test('argv-level: instance list --json is parsed; garbage is not an empty list', () => {
    assert.deepEqual(cli.parseList('{\n\t"instances": [\n\t\t{"instance": "a", "pid": 1}, {"instance": "b", "pid": 2}\n\t]\n}\n'), ['a', 'b']);
    assert.deepEqual(cli.parseList('{"instances": []}'), []);
    assert.equal(cli.parseList('INSTANCE NAME    PID'), undefined);
    assert.equal(cli.parseList('{"other": 1}'), undefined);
  });

  test('argv-level: prepare starts our instance only when it is not running', async () => {
    const stopped = fakeApptainer([]);
    const sandbox = await new ApptainerBackend(settings({ path: stopped.path }), 'abc', testLog).prepare();
    assert.equal(sandbox.id, instanceName('abc'));
    assert.equal(sandbox.backend, 'apptainer');
    assert.deepEqual(stopped.calls(), [
      ['instance', 'list', '--json'],
      ['instance', 'start', '--containall', '--no-home', '--writable-tmpfs', '--', '/images/desktop.sif', 'botscreen_abc'],
    ]);
    assert.deepEqual(sandbox.exec(['id'], { interactive: true }), { command: stopped.path, args: ['exec', 'instance://botscreen_abc', 'id'] });

    const running = fakeApptainer(['agent_box']);
    await new ApptainerBackend(settings({ path: running.path, instance: 'agent_box' }), 'abc', testLog).prepare();
    assert.deepEqual(running.calls(), [['instance', 'list', '--json']], 'a running instance is used as it is');
  });

  test('argv-level: find and liveness never start anything; not listed is gone, a CLI error unknown', async () => {
    const fake = fakeApptainer(['other']);
    const backend = new ApptainerBackend(settings({ path: fake.path }), 'abc', testLog);
    assert.equal(await backend.find(), undefined);
    const recorded = await backend.fromIdentity({ backend: 'apptainer', id: 'other', name: 'other' });
    assert.equal(await backend.liveness(recorded), 'alive');
    const gone = await backend.fromIdentity({ backend: 'apptainer', id: 'vanished', name: 'vanished' });
    assert.equal(await backend.liveness(gone), 'gone');
    assert.ok(fake.calls().every((argv) => argv[1] !== 'start'));
    const broken = fakeCli('apptainer', 'echo "FATAL: could not retrieve instance list" >&2; exit 255');
    assert.equal(await new ApptainerBackend(settings({ path: broken.path }), 'abc', testLog).liveness(recorded), 'unknown');
  });

  test('argv-level: bad instance names, bad images and a missing CLI are refused before anything starts', async () => {
    for (const instance of ['a b', '-x', 'x*', '../x', 'x;id', 'x/y', 'é', 'a'.repeat(64)]) {
      const fake = fakeApptainer([]);
      await assert.rejects(
        new ApptainerBackend(settings({ path: fake.path, instance }), 'abc', testLog).prepare(),
        (err: unknown) => err instanceof ScreenError && err.problem.code === 'badInstance',
      );
      assert.deepEqual(fake.calls(), [], `nothing ran for ${JSON.stringify(instance)}`);
    }
    for (const image of ['', '-x', 'a\nb']) {
      const fake = fakeApptainer([]);
      await assert.rejects(
        new ApptainerBackend(settings({ path: fake.path, image }), 'abc', testLog).prepare(),
        (err: unknown) => err instanceof ScreenError && err.problem.code === 'badImage',
      );
      assert.ok(fake.calls().every((argv) => argv[1] !== 'start'));
    }
    await assert.rejects(
      new ApptainerBackend(settings({ path: '/nonexistent/apptainer' }), 'abc', testLog).prepare(),
      (err: unknown) => err instanceof ScreenError && err.problem.code === 'cliMissing',
    );
    await assert.rejects(
      new ApptainerBackend(settings(), 'abc', testLog).fromIdentity({ backend: 'apptainer', id: '-oops', name: '' }),
      (err: unknown) => err instanceof ScreenError && err.problem.code === 'badInstance',
    );
  });

  test('argv-level: a reload re-attaches to the instance the marker records, never starting a new one', async () => {
    const fake = fakeApptainer(['recorded_one']);
    const config = screenSettings({ backend: 'apptainer', backendRaw: 'apptainer', apptainer: { path: fake.path, image: '/images/desktop.sif', instance: 'configured_now' } });
    const markers = tempMarkers();
    markers.write({
      version: 1,
      workspaceKey: config.workspaceKey,
      placement: { where: 'sandbox', backend: 'apptainer' },
      sandbox: { backend: 'apptainer', id: 'recorded_one', name: 'recorded_one' },
      display: ':42',
      runtimeDir: '/tmp/rdir',
      socket: '/tmp/rdir/rfb.sock',
      pid: 4242,
      geometry: '1280x800',
      startedAt: new Date().toISOString(),
    });
    const controller = new ScreenController(() => config, testLog, markers);
    try {
      await controller.attach();
      assert.equal(controller.status.state, 'running');
      assert.equal(controller.status.sandbox?.id, 'recorded_one');
      const started = await controller.start();
      assert.equal(started.sandbox?.id, 'recorded_one', 'a start adopts the recorded screen');
      const calls = fake.calls();
      assert.ok(calls.every((argv) => !(argv[0] === 'instance' && argv[1] === 'start')), 'no instance was started');
      const execs = calls.filter((argv) => argv[0] === 'exec');
      assert.ok(execs.length >= 2);
      assert.ok(execs.every((argv) => argv[1] === 'instance://recorded_one'), 'every exec went to the recorded instance');
    } finally {
      controller.dispose();
    }
  });
});
