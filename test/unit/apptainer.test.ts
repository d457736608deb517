// Apptainer cannot run here (no binary, no setuid/userns setup): these tests pin the exact argv
// and the re-attach logic against a recording stand-in for the CLI, and the environment the
// contained processes get against a stand-in that builds it by Apptainer's own rules.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { ApptainerBackend, ApptainerCli, instanceName, type ApptainerSettings } from '../../src/core/backends/apptainer';
import { ScreenError } from '../../src/core/problem';
import { run } from '../../src/core/runner';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import { settings as screenSettings, tempMarkers, testLog } from '../support/env';
import { fakeCli } from '../support/fixtures';

/** A successful run's result with this output. */
const ok = (stdout: string) => ({ exitCode: 0, stdout, stderr: '', timedOut: false });

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
  exec\\ *) cat >/dev/null; printf 'DISPLAY=:42\\nBOTSCREEN_PID=4242\\nBOTSCREEN_SOCKET=/tmp/rdir/rfb.sock\\nBOTSCREEN_RUNTIME_DIR=/tmp/rdir\\nBOTSCREEN_GEOMETRY=1280x800\\nBOTSCREEN_ADOPTED=1\\n' ;;
  *) exit 64 ;;
esac`,
  );
}

describe('argv-level: apptainer', () => {
  const cli = new ApptainerCli('apptainer');

  test('argv-level: exec runs argv in the instance, words untouched, no shell', () => {
    assert.deepEqual(cli.exec('botscreen_abc', ['python3', '-c', "print('a b')", '$HOME']), {
      command: 'apptainer',
      args: ['exec', '--cleanenv', '--env', 'LANG=C.UTF-8', 'instance://botscreen_abc', 'python3', '-c', "print('a b')", '$HOME'],
    });
    assert.equal(new ApptainerCli('singularity').exec('x', ['true']).command, 'singularity');
  });

  test('argv-level: an instance starts contained, clean env, without home, on a writable tmpfs, image after --', () => {
    assert.deepEqual(cli.start('docker://botscreen/sandbox:desktop', 'botscreen_abc').args, [
      'instance', 'start', '--cleanenv', '--env', 'LANG=C.UTF-8', '--containall', '--no-home', '--writable-tmpfs', '--', 'docker://botscreen/sandbox:desktop', 'botscreen_abc',
    ]);
    assert.deepEqual(cli.list().args, ['instance', 'list', '--json']);
  });

  test('argv-level: instance list --json is parsed; garbage is not an empty list', () => {
    assert.deepEqual(cli.list().parse(ok('{\n\t"instances": [\n\t\t{"instance": "a", "pid": 1}, {"instance": "b", "pid": 2}\n\t]\n}\n')), ['a', 'b']);
    assert.deepEqual(cli.list().parse(ok('{"instances": []}')), []);
    assert.equal(cli.list().parse(ok('INSTANCE NAME    PID')), undefined);
    assert.equal(cli.list().parse(ok('{"other": 1}')), undefined);
    assert.equal(cli.list().parse({ ...ok('{"instances": []}'), exitCode: 1 }), undefined, 'a failed list says nothing');
  });

  test('argv-level: prepare starts our instance only when it is not running', async () => {
    const stopped = fakeApptainer([]);
    const sandbox = await new ApptainerBackend(settings({ path: stopped.path }), 'abc', testLog).prepare();
    assert.equal(sandbox.id, instanceName('abc'));
    assert.equal(sandbox.backend, 'apptainer');
    assert.deepEqual(stopped.calls(), [
      ['instance', 'list', '--json'],
      ['instance', 'start', '--cleanenv', '--env', 'LANG=C.UTF-8', '--containall', '--no-home', '--writable-tmpfs', '--', '/images/desktop.sif', 'botscreen_abc'],
    ]);
    assert.deepEqual(sandbox.exec(['id'], { interactive: true }), {
      command: stopped.path,
      args: ['exec', '--cleanenv', '--env', 'LANG=C.UTF-8', 'instance://botscreen_abc', 'id'],
    });

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
    const controller = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
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
      assert.ok(execs.every((argv) => argv.includes('instance://recorded_one')), 'every exec went to the recorded instance');
      assert.ok(execs.every((argv) => argv[1] === '--cleanenv'), 'every exec ran in a clean environment');
    } finally {
      controller.dispose();
    }
  });
});

/**
 * A stand-in that builds the contained environment the way Apptainer 1.x does
 * (internal/pkg/util/env/clean.go): without --cleanenv the host's whole environment (but
 * APPTAINER_*); with it only LANG=C, TERM and the proxy variables; then APPTAINERENV_* and
 * --env; HOME and PATH always its own. `exec` runs argv on this machine in that environment
 * (the "instance" is this machine); `instance start` saves the environment its processes would
 * get to `instance-<name>.env` next to the script.
 */
function envHonouringApptainer() {
  return fakeCli(
    'apptainer',
    `here=$(dirname "$0")
cmd=$1; shift
[ "$cmd" = instance ] && { sub=$1; shift; }
[ "\${sub:-}" = list ] && { printf '{"instances":[]}\\n'; exit 0; }
clean=0; extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --cleanenv|-e) clean=1 ;;
    --env) extra+=("$2"); shift ;;
    --env=*) extra+=("\${1#--env=}") ;;
    --containall|-C|--no-home|--writable-tmpfs) ;;
    --) shift; break ;;
    -*) echo "stand-in: unknown option $1" >&2; exit 64 ;;
    *) break ;;
  esac
  shift
done
contained=(); forwarded=()
[ $clean = 1 ] && contained+=(LANG=C)
while IFS= read -r -d '' kv; do
  name=\${kv%%=*}
  case $name in
    APPTAINERENV_*) forwarded+=("\${kv#APPTAINERENV_}") ;;
    APPTAINER_*|HOME|PATH) ;;
    TERM|http_proxy|HTTP_PROXY|https_proxy|HTTPS_PROXY|no_proxy|NO_PROXY|all_proxy|ALL_PROXY|ftp_proxy|FTP_PROXY) contained+=("$kv") ;;
    *) [ $clean = 0 ] && contained+=("$kv") ;;
  esac
done < <(env -0)
contained+=("\${forwarded[@]}" "\${extra[@]}" HOME=/home/pn PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
case $cmd/\${sub:-} in
  instance/start) env -i "\${contained[@]}" env -0 >"$here/instance-$2.env" ;;
  exec/) case $1 in instance://*) shift ;; *) exit 64 ;; esac
    exec env -i "\${contained[@]}" "$@" ;;
  *) exit 64 ;;
esac`,
  );
}

describe('argv-level: the extension host\'s environment stays out of the instance', () => {
  const secretName = 'BOTSCREEN_TEST_SECRET_TOKEN';
  const secret = `s3cret-${randomBytes(8).toString('hex')}`;

  /** Runs body with the secret in this process's environment, which every spawned CLI inherits. */
  async function withSecret(body: () => Promise<void>): Promise<void> {
    process.env[secretName] = secret;
    try {
      await body();
    } finally {
      delete process.env[secretName];
    }
  }

  const entries = (nulSeparated: string) => nulSeparated.split('\0').filter(Boolean);

  test('argv-level: the stand-in leaks the secret without --cleanenv (so the checks below can fail)', async () => {
    const fake = envHonouringApptainer();
    await withSecret(async () => {
      const leaky = await run({ command: fake.path, args: ['exec', 'instance://x', 'env', '-0'] }, { timeoutMs: 10_000 });
      assert.equal(leaky.exitCode, 0, leaky.stderr);
      assert.ok(entries(leaky.stdout).includes(`${secretName}=${secret}`));
    });
  });

  test('argv-level: instance start and every exec run with --cleanenv; the secret reaches neither', async () => {
    const fake = envHonouringApptainer();
    await withSecret(async () => {
      const backend = new ApptainerBackend(settings({ path: fake.path }), 'abc', testLog);
      const sandbox = await backend.prepare();
      const envFile = join(dirname(fake.path), 'instance-botscreen_abc.env');
      assert.ok(existsSync(envFile), 'the instance was started');
      const instanceEnv = entries(readFileSync(envFile, 'utf8'));
      assert.ok(!instanceEnv.some((e) => e.includes(secret)), `the instance's processes do not get the secret: ${instanceEnv.join(' ')}`);
      assert.ok(instanceEnv.includes('LANG=C.UTF-8'), 'a UTF-8 locale is passed explicitly');

      const result = await run(sandbox.exec(['env', '-0'], { interactive: false }), { timeoutMs: 10_000 });
      assert.equal(result.exitCode, 0, result.stderr);
      const execEnv = entries(result.stdout);
      assert.ok(!execEnv.some((e) => e.includes(secret)), `an exec does not get the secret: ${execEnv.join(' ')}`);
      assert.ok(execEnv.includes('LANG=C.UTF-8'));
      const names = execEnv.map((e) => e.slice(0, e.indexOf('='))).sort();
      assert.deepEqual(names.filter((n) => !['HOME', 'LANG', 'PATH', 'TERM'].includes(n) && !/proxy$/i.test(n)), [], 'nothing else passes');
    });
    const calls = fake.calls();
    const startsAndExecs = calls.filter((argv) => argv[0] === 'exec' || (argv[0] === 'instance' && argv[1] === 'start'));
    assert.equal(startsAndExecs.length, 2);
    assert.ok(startsAndExecs.every((argv) => argv.includes('--cleanenv')));
  });
});
