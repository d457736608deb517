import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DockerCli, engineCli, isDaemonDown, isNoSuchContainer } from '../../src/core/backends/dockerCli';

/** A successful run's result with this output. */
const ok = (stdout: string) => ({ exitCode: 0, stdout, stderr: '', timedOut: false });

const docker = new DockerCli('docker');

test('a new sandbox: init, limits, dropped capabilities, no published port, image after --', () => {
  const { command, args } = docker.runDetached({ image: 'botscreen/sandbox:desktop', name: 'botscreen-abc', workspaceKey: 'abc', pidsLimit: 4096 });
  assert.equal(command, 'docker');
  assert.deepEqual(args.slice(0, 3), ['run', '-d', '--init']);
  const after = (flag: string) => args[args.indexOf(flag) + 1];
  assert.equal(after('--pids-limit'), '4096');
  assert.equal(after('--shm-size'), '1g');
  assert.equal(after('--cap-drop'), 'ALL');
  assert.equal(after('--security-opt'), 'no-new-privileges');
  assert.match(after('--tmpfs'), /^\/tmp:/);
  for (const publish of ['-p', '-P', '--publish', '--publish-all', '--network=host', '--privileged']) {
    assert.ok(!args.includes(publish), `no ${publish}`);
  }
  assert.deepEqual(args.slice(args.indexOf('--')), ['--', 'botscreen/sandbox:desktop', 'sleep', 'infinity']);
  assert.ok(args.includes('dev.botscreen.managed=1') && args.includes('dev.botscreen.workspace=abc'));
});

test('exec keeps stdin open with -i and never allocates a tty', () => {
  const stream = docker.execArgs('cid', 'pn', ['python3', '-c', 'x'], true);
  assert.deepEqual(stream.args, ['exec', '-i', '-u', 'pn', '--', 'cid', 'python3', '-c', 'x']);
  const probe = docker.execArgs('cid', undefined, ['id'], false);
  assert.deepEqual(probe.args, ['exec', '--', 'cid', 'id']);
  assert.ok(![...stream.args, ...probe.args].some((a) => a === '-t' || a === '-it' || a === '--tty'));
});

test('managed containers are parsed from ps output, garbage ignored', () => {
  const id = 'a'.repeat(64);
  const parsed = docker.findManaged('k').parse(ok(`${id}\trunning\tbotscreen/sandbox:desktop\nWARNING something\n${'b'.repeat(64)}\texited\tother:1\n`));
  assert.deepEqual(parsed, [
    { id, running: true, image: 'botscreen/sandbox:desktop' },
    { id: 'b'.repeat(64), running: false, image: 'other:1' },
  ]);
});

test('container state: running, stopped, gone, and unknown for CLI errors', () => {
  const result = (exitCode: number | undefined, stdout: string, stderr = '') => ({ exitCode, stdout, stderr, timedOut: exitCode === undefined });
  assert.equal(docker.inspectState('abc').parse(result(0, 'abc true\n')), 'running');
  assert.equal(docker.inspectState('abc').parse(result(0, 'abc false\n')), 'stopped');
  assert.equal(docker.inspectState('abc').parse(result(1, '', 'Error: No such container: abc')), 'gone');
  assert.equal(docker.inspectState('abc').parse(result(1, '', 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock')), 'unknown');
  assert.equal(docker.inspectState('abc').parse(result(undefined, '')), 'unknown');
});

test('daemon-down and no-such-container messages are told apart', () => {
  assert.ok(isDaemonDown('Cannot connect to the Docker daemon at unix:///x.sock. Is the docker daemon running?'));
  assert.ok(!isDaemonDown('Error: No such container: x'));
  assert.ok(isNoSuchContainer('Error response from daemon: No such container: x'));
});

test('liveness events: a stream of one container\'s end and removal, filtered by the engine, replaying a window', () => {
  const events = docker.events('cid', 7);
  assert.equal(events.command, 'docker');
  assert.deepEqual(events.args, [
    'events', '--since', '7s',
    '--filter', 'type=container', '--filter', 'container=cid',
    '--filter', 'event=die', '--filter', 'event=destroy',
    '--format', '{{.Action}}',
  ]);
  assert.equal(events.parseLine('die'), 'stopped');
  assert.equal(events.parseLine('destroy\r'), 'removed');
  for (const other of ['', 'exec_die', 'kill', 'died', 'WARNING: something']) {
    assert.equal(events.parseLine(other), undefined, JSON.stringify(other));
  }
});

test('liveness events on Podman: its own event names and format', () => {
  const events = engineCli('podman', 'podman').events('cid', 3);
  assert.equal(events.command, 'podman');
  assert.deepEqual(events.args.slice(0, 3), ['events', '--since', '3s']);
  assert.ok(events.args.includes('event=died') && events.args.includes('event=remove'));
  assert.equal(events.args.at(-1), '{{.Status}}');
  assert.equal(events.parseLine('died'), 'stopped');
  assert.equal(events.parseLine('remove'), 'removed');
  assert.equal(events.parseLine('die'), undefined);
});
