import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LAUNCHER_SCRIPT, launcherCommand, parseMissing, parsePublished } from '../../src/core/launcher';
import { RELAY_SOURCE, rfbRelayCommand } from '../../src/core/relay';
import { DockerCli } from '../../src/core/backends/dockerCli';
import { hostSandbox } from '../../src/core/sandbox';

const sandbox = new DockerCli('docker').sandbox('cid', 'botscreen-x', 'pn');

test('the launcher travels on stdin, not in argv', () => {
  const { command, input } = launcherCommand(sandbox, 'abc123', { mode: 'start', geometry: '1280x800', timeoutSeconds: 20 });
  assert.equal(input, LAUNCHER_SCRIPT);
  assert.ok(!command.args.some((arg) => arg.includes('run_screen')), 'the script body is not in argv');
  assert.deepEqual(command.args.slice(0, 6), ['exec', '-i', '-u', 'pn', '--', 'cid']);
  assert.deepEqual(command.args.slice(-5), ['botscreen', 'abc123', 'start', '1280x800', '20']);
});

test('Xvnc is started on a 0600 unix socket with TCP off, and no cookie in argv', () => {
  assert.match(LAUNCHER_SCRIPT, /-rfbport -1 -rfbunixpath "\$rdir\/rfb\.sock" -rfbunixmode 0600 -nolisten tcp/);
  assert.match(LAUNCHER_SCRIPT, /-SecurityTypes None/);
  assert.match(LAUNCHER_SCRIPT, /xauth -q -f "\$XAUTHORITY" source -/);
});

test('on this machine the same launcher runs without any exec prefix', () => {
  const { command } = launcherCommand(hostSandbox('local'), 'k', { mode: 'stop' });
  assert.equal(command.command, 'bash');
  assert.deepEqual(command.args.slice(-3), ['botscreen', 'k', 'stop']);
});

test('published env is parsed; the session env keeps only non-launcher keys', () => {
  const screen = parsePublished(
    [
      'DISPLAY=:21',
      'XAUTHORITY=/tmp/botscreen-1000/k/Xauthority',
      'DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/dbus-x,guid=1',
      'BOTSCREEN_PID=42',
      'BOTSCREEN_SOCKET=/tmp/botscreen-1000/k/rfb.sock',
      'BOTSCREEN_RUNTIME_DIR=/tmp/botscreen-1000/k',
      'BOTSCREEN_GEOMETRY=1280x800',
      'BOTSCREEN_ADOPTED=1',
      'noise line',
    ].join('\n'),
  );
  assert.ok(screen);
  assert.equal(screen.display, ':21');
  assert.equal(screen.pid, 42);
  assert.equal(screen.adopted, true);
  assert.equal(screen.env.DBUS_SESSION_BUS_ADDRESS, 'unix:path=/tmp/dbus-x,guid=1');
  assert.deepEqual(Object.keys(screen.env).sort(), ['DBUS_SESSION_BUS_ADDRESS', 'DISPLAY', 'XAUTHORITY']);
});

test('incomplete output is not a screen', () => {
  assert.equal(parsePublished('DISPLAY=:20\n'), undefined);
  assert.equal(parsePublished('DISPLAY=:20\nBOTSCREEN_SOCKET=/s\nBOTSCREEN_PID=x\n'), undefined);
});

test('missing binaries are listed by name', () => {
  assert.deepEqual(parseMissing('BOTSCREEN_MISSING=Xvnc xfwm4 python3\n'), ['Xvnc', 'xfwm4', 'python3']);
  assert.deepEqual(parseMissing(''), []);
});

test('the relay runs python3 with its source and the socket path as separate argv words', () => {
  const { args } = rfbRelayCommand(sandbox, '/tmp/botscreen-1000/k/rfb.sock');
  assert.deepEqual(args.slice(-4), ['python3', '-c', RELAY_SOURCE, '/tmp/botscreen-1000/k/rfb.sock']);
});
