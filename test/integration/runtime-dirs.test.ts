// Runtime directories another user cannot redirect or block, attacked for real by a second Unix
// user: on this machine (gateway; the victim is the user running the tests), inside the sandbox
// container (useradd in the container; the victim is `pn`) and on the test sshd (the victim is
// the ssh login user). The attacker plants a symlink to a trap of its own (a launcher.sh that
// records being run, a listening rfb.sock that records every connection and byte), pre-creates
// the directory, flips the name in a loop during 200 launcher runs and full starts, and holds the
// X displays :20-:99. In every case the screen must start in a private directory of its own,
// the trap must never run and the attacker's sockets must never be connected to.
//
// On this machine and on the sshd, the victims' TMPDIR is a sticky directory of this test (the
// real /tmp is shared with other users' screens); the container's /tmp is its own.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { DockerBackend } from '../../src/core/backends/docker';
import { SshBackend, controlPath, sshDestination } from '../../src/core/backends/ssh';
import { launcherCommand, parsePublished } from '../../src/core/launcher';
import { rfbRelayCommand } from '../../src/core/relay';
import { openStream, run } from '../../src/core/runner';
import type { Sandbox } from '../../src/core/sandbox';
import { hostSandbox } from '../../src/core/sandbox';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import type { ScreenSettings } from '../../src/core/settings';
import { removeUser } from '../support/otherUser';
import { rfbHandshake } from '../support/rfb';
import { removeTestContainers, settings, tempMarkers, testLog, waitFor } from '../support/env';
import { startSshd, type Sshd } from '../support/sshd';

const RUNS = 200;
const FULL_STARTS = 3;
const tag = randomBytes(3).toString('hex');

// A sticky, root-owned directory like /tmp: this process's TMPDIR (the gateway screens and the
// ssh control dir use it), and the ssh login user's (through sshd's SetEnv).
function stickyDir(name: string): string {
  const dir = `/tmp/bsrd-${tag}-${name}`;
  mkdirSync(dir);
  chmodSync(dir, 0o1777);
  return dir;
}
const hostTmp = stickyDir('host');
const sshTmp = stickyDir('ssh');
process.env.TMPDIR = hostTmp;
delete process.env.XDG_RUNTIME_DIR;

/** The attacker's logging server: a fake RFB banner to every connection, each connection and byte logged. */
const LOGGER = String.raw`
import os, socket, sys, threading
log = sys.argv[1]
def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")
def serve(srv, name):
    while True:
        conn, _ = srv.accept()
        note("connect " + name)
        try:
            conn.sendall(b"RFB 003.008\n")
        except OSError:
            pass
        def read(conn=conn):
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    break
                if not data:
                    break
                note("bytes %s %d" % (name, len(data)))
        threading.Thread(target=read, daemon=True).start()
for name in sys.argv[2:]:
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind("\0" + name[1:] if name.startswith("@") else name)
    if not name.startswith("@"):
        os.chmod(name, 0o777)
    srv.listen(64)
    threading.Thread(target=serve, args=(srv, name), daemon=True).start()
note("ready")
threading.Event().wait()
`;

/** Flips NAME between symlinks to each target (and a directory of the attacker's, `DIR`) until STOP exists. */
const FLIPPER = String.raw`
import os, shutil, sys, time
stop, name, targets = sys.argv[1], sys.argv[2], sys.argv[3:]
tmp = os.path.join(os.path.dirname(name), "atk-flip-%d" % os.getpid())
i = 0
while not os.path.exists(stop):
    target = targets[i % len(targets)]
    i += 1
    try:
        if os.path.isdir(name) and not os.path.islink(name):
            shutil.rmtree(name)
    except OSError:
        pass
    try:
        if target == "DIR":
            if os.path.lexists(name):
                os.unlink(name)
            os.mkdir(name)
            os.chmod(name, 0o777)
        else:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(target, tmp)
            os.rename(tmp, name)
    except OSError:
        pass
    time.sleep(0.0005)
`;

/** The trap: a directory of the attacker's with KEY/launcher.sh that records being run. */
const TRAP = String.raw`
set -e
T=$1 KEY=$2
mkdir -p "$T/$KEY"
chmod 0777 "$T" "$T/$KEY"
printf '#!/bin/sh\necho "run by $(id -u)" >>%s/pwned\n' "$T" >"$T/$KEY/launcher.sh"
chmod 0777 "$T/$KEY/launcher.sh"
: >"$T/log"
chmod 0666 "$T/log"
`;

/** One place a screen can run, with a victim, an attacker and a root to set things up there. */
interface Place {
  readonly name: string;
  readonly victimUid: number;
  /** The victim's temp dir there. */
  readonly tmp: string;
  /** The same directory seen from this machine (a container's through /proc/PID/root): checks without an exec. */
  readonly tmpHere: string;
  readonly config: ScreenSettings;
  asRoot(script: string, ...args: string[]): string;
  asAttacker(script: string, ...args: string[]): string;
  /** A long-running attacker program (python3 source); killed by pid in cleanup. */
  spawnAttacker(python: string, ...args: string[]): ChildProcess;
  sandbox(): Promise<Sandbox>;
}

const children: ChildProcess[] = [];

function hostUser(): { name: string; uid: number; gid: number } {
  const name = `bsrd${tag}`;
  execFileSync('useradd', ['--no-create-home', '--shell', '/bin/sh', '--comment', 'Bot Screen runtime-dir attacker', name]);
  const [, , uid, gid] = execFileSync('getent', ['passwd', name], { encoding: 'utf8' }).trim().split(':');
  return { name, uid: Number(uid), gid: Number(gid) };
}

function hostPlace(name: string, victimUid: number, tmp: string, config: ScreenSettings, sandbox: () => Promise<Sandbox>, attacker: { uid: number; gid: number }): Place {
  const setpriv = ['--reuid', String(attacker.uid), '--regid', String(attacker.gid), '--clear-groups', '--'];
  return {
    name,
    victimUid,
    tmp,
    tmpHere: tmp,
    config,
    asRoot: (script, ...args) => execFileSync('sh', ['-c', script, 'sh', ...args], { encoding: 'utf8' }),
    asAttacker: (script, ...args) => execFileSync('setpriv', [...setpriv, 'sh', '-c', script, 'sh', ...args], { encoding: 'utf8' }),
    spawnAttacker: (python, ...args) => {
      const child = spawn('setpriv', [...setpriv, '/usr/bin/python3', '-c', python, ...args], { stdio: 'ignore' });
      children.push(child);
      return child;
    },
    sandbox,
  };
}

function dockerPlace(containerId: string, config: ScreenSettings, sandbox: () => Promise<Sandbox>): Place {
  const pid = execFileSync('docker', ['inspect', '--format', '{{.State.Pid}}', containerId], { encoding: 'utf8' }).trim();
  const exec = (user: string, script: string, args: string[]) =>
    execFileSync('docker', ['exec', '-u', user, containerId, 'sh', '-c', script, 'sh', ...args], { encoding: 'utf8' });
  return {
    name: 'docker',
    victimUid: 1000,
    tmp: '/tmp',
    tmpHere: `/proc/${pid}/root/tmp`,
    config,
    asRoot: (script, ...args) => exec('root', script, args),
    asAttacker: (script, ...args) => exec('bsatk', script, args),
    spawnAttacker: (python, ...args) => {
      // Ends with the container (removed in cleanup); the exec client here is killed by pid.
      const child = spawn('docker', ['exec', '-u', 'bsatk', containerId, 'python3', '-c', python, ...args], { stdio: 'ignore' });
      children.push(child);
      return child;
    },
    sandbox,
  };
}

interface Entry {
  readonly uid: number;
  readonly type: string;
  readonly path: string;
}

/**
 * One root call: every entry under the victim's runtime-dir names (botscreen-UID and
 * botscreen-UID.*), the trap and the decoy (`E uid type path`), the trap's log (`L line`); then,
 * with `reset`, removes the victim's runtime dirs, as a fresh boot would, so that the next run
 * races the attacker again.
 */
const SNAPSHOT = String.raw`
cd "$1" || exit 1
tmp=$1 uid=$2 trap=$3 decoy=$4 reset=$5
for n in "botscreen-$uid" "botscreen-$uid".* "$trap" "$decoy"; do
  n=$(basename -- "$n")
  if [ -e "$n" ] || [ -L "$n" ]; then find "$tmp/$n" -printf 'E %U %y %p
'; fi
done
sed 's/^/L /' "$trap/log"
if [ "$reset" = 1 ]; then
  find "$tmp" -mindepth 1 -maxdepth 1 -user "$uid" \( -name "botscreen-$uid" -o -name "botscreen-$uid.*" \) -exec rm -rf {} +
fi
true
`;

/** The directories a launcher of the victim may have used: ours, named for the victim's uid. */
function privateBase(place: Place): RegExp {
  return new RegExp(`^${place.tmp}/botscreen-${place.victimUid}(\\.[A-Za-z0-9]{8})?$`);
}

/**
 * Asserts that everything the victim wrote is inside a directory of its own (named as the
 * launcher names them, owned by the victim, a real directory), that its launcher copies are in
 * KEY there, that the decoy is untouched, that the attacker's launcher never ran and that its
 * sockets were never connected to. With `reset`, the victim's dirs are then removed.
 */
function assertUntouched(place: Place, key: string, trap: string, decoy: string | undefined, when: string, reset = false): void {
  // Run here, on the place's temp dir as this machine sees it (one exec less per run in a container).
  const here = (path: string) => place.tmpHere + path.slice(place.tmp.length);
  const out = execFileSync('sh', ['-c', SNAPSHOT, 'sh', place.tmpHere, String(place.victimUid), here(trap), here(decoy ?? trap), reset ? '1' : '0'], {
    encoding: 'utf8',
  })
    .split('\n')
    .map((line) => line.replace(`${place.tmpHere}/`, `${place.tmp}/`));
  const seen: Entry[] = out
    .filter((line) => line.startsWith('E '))
    .map((line) => {
      const [, uid, type, ...path] = line.split(' ');
      return { uid: Number(uid), type, path: path.join(' ') };
    });
  const byPath = new Map(seen.map((e) => [e.path, e]));
  for (const e of seen) {
    if (e.uid !== place.victimUid || e.path === decoy) {
      continue;
    }
    const top = `${place.tmp}/${e.path.slice(place.tmp.length + 1).split('/')[0]}`;
    const base = byPath.get(top);
    assert.ok(base && privateBase(place).test(top), `${when}: the victim wrote ${e.path} outside a directory of its own`);
    assert.equal(base.uid, place.victimUid, `${when}: ${e.path} is inside ${top}, which is not the victim's`);
    assert.equal(base.type, 'd', `${when}: ${top} is not a real directory`);
    if (e.path.endsWith('/launcher.sh')) {
      assert.equal(e.path, `${top}/${key}/launcher.sh`, `${when}: a launcher copy where it does not belong`);
    }
  }
  assert.ok(!byPath.has(`${trap}/pwned`), `${when}: the attacker's launcher ran`);
  const log = out.filter((line) => line.startsWith('L ')).map((line) => line.slice(2));
  assert.ok(log.includes('ready'), `${when}: the attacker's logger is up`);
  assert.deepEqual(log.filter((line) => line !== 'ready'), [], `${when}: the attacker's sockets saw something`);
  if (decoy) {
    assert.deepEqual(seen.filter((e) => e.path.startsWith(`${decoy}/`)), [], `${when}: the launcher used the decoy a symlink pointed at`);
  }
}

/** Removes the victim's runtime dirs (as a fresh boot would), so the next run races the attacker again. */
function resetVictim(place: Place): void {
  place.asRoot(
    'find "$1" -mindepth 1 -maxdepth 1 -user "$2" \\( -name "botscreen-$2" -o -name "botscreen-$2.*" \\) -exec rm -rf {} +',
    place.tmp,
    String(place.victimUid),
  );
}

/** Sets up a trap with its logging socket at KEY/rfb.sock; resolves when the logger listens. */
async function plantTrap(place: Place, key: string, extraSockets: string[] = []): Promise<string> {
  const trap = `${place.tmp}/atk-${tag}-${randomBytes(2).toString('hex')}`;
  place.asAttacker(TRAP, trap, key);
  place.spawnAttacker(LOGGER, `${trap}/log`, `${trap}/${key}/rfb.sock`, ...extraSockets);
  await waitFor(() => place.asRoot('cat "$1/log"', trap).includes('ready'), 20_000, 50, 'the attacker\'s logger');
  return trap;
}

/** A started screen: running, in a private dir of the victim's own, RFB spoken through the relay. */
async function startAndCheck(place: Place, controller: ScreenController, when: string): Promise<string> {
  const status = await controller.start();
  assert.equal(status.state, 'running', `${when}: ${JSON.stringify(status.problem)}`);
  const screen = status.screen!;
  const base = screen.runtimeDir.slice(0, screen.runtimeDir.lastIndexOf('/'));
  assert.match(base, privateBase(place), `${when}: runtime dir ${screen.runtimeDir}`);
  assert.equal(screen.runtimeDir, `${base}/${place.config.workspaceKey}`);
  assert.equal(screen.socket, `${screen.runtimeDir}/rfb.sock`);
  // The published path is physical (no symlink anywhere) and private.
  const facts = place.asRoot('realpath -e "$1"; stat -c "%u %a %F" "$1" "$2" "$3"', screen.socket, screen.runtimeDir, base).trim().split('\n');
  assert.deepEqual(facts, [screen.socket, `${place.victimUid} 600 socket`, `${place.victimUid} 700 directory`, `${place.victimUid} 700 directory`], when);
  const relay = controller.openRelay();
  try {
    const init = await rfbHandshake(relay.stdout, relay.stdin);
    assert.equal(init.banner, 'RFB 003.008\n');
    assert.equal(init.name, 'Bot Screen', `${when}: the real Xvnc answered`);
  } finally {
    relay.kill();
  }
  return screen.display;
}

/** The attacks every place gets. */
function attacks(placeOf: () => Place, controllerOf: () => ScreenController): void {
  test('a symlink planted before the start: the screen starts in a private dir of its own', async () => {
    const place = placeOf();
    const key = place.config.workspaceKey;
    resetVictim(place);
    const trap = await plantTrap(place, key);
    const name = `${place.tmp}/botscreen-${place.victimUid}`;
    place.asAttacker('ln -s "$1" "$2"', trap, name);
    try {
      await startAndCheck(place, controllerOf(), 'planted symlink');
      await controllerOf().stop();
      assertUntouched(place, key, trap, undefined, 'planted symlink');
    } finally {
      await controllerOf().stop().catch(() => undefined);
      place.asAttacker('rm -f "$1"', name);
    }
  });

  test('a directory pre-created by the attacker: skipped for a fresh private one, never an error', async () => {
    const place = placeOf();
    const key = place.config.workspaceKey;
    resetVictim(place);
    const trap = await plantTrap(place, key);
    const name = `${place.tmp}/botscreen-${place.victimUid}`;
    place.asAttacker('mkdir -m 0777 "$1" && mkdir -m 0777 "$1/$2" && cp "$3/$2/launcher.sh" "$1/$2/" && chmod 0777 "$1" "$1/$2"', name, key, trap);
    try {
      await startAndCheck(place, controllerOf(), 'pre-created dir');
      // Found again by the next calls (status, stop), not a new one each time.
      const again = await controllerOf().start();
      assert.equal(again.screen!.adopted, true, 'the second start adopts the screen in the fallback dir');
      await controllerOf().stop();
      assertUntouched(place, key, trap, undefined, 'pre-created dir');
      assert.equal(place.asRoot('ls -A "$1/$2"', name, key).trim(), 'launcher.sh', 'nothing written in the attacker\'s dir');
    } finally {
      await controllerOf().stop().catch(() => undefined);
      place.asAttacker('rm -rf "$1"', name);
    }
  });

  test(`a symlink flipped in a loop during ${RUNS} launcher runs and ${FULL_STARTS} full starts`, async () => {
    const place = placeOf();
    const key = place.config.workspaceKey;
    resetVictim(place);
    const trap = await plantTrap(place, key);
    // A private directory of the victim's own as the other symlink target: the classic flip
    // between "passes the check" and "the attacker's".
    const decoy = `${place.tmp}/decoy-${tag}`;
    place.asRoot('mkdir -m 0700 "$1" && chown "$2" "$1"', decoy, String(place.victimUid));
    const stop = `${place.tmp}/atk-stop-${tag}`;
    const flipper = place.spawnAttacker(FLIPPER, stop, `${place.tmp}/botscreen-${place.victimUid}`, trap, decoy, 'DIR', trap);
    const sandbox = await place.sandbox();
    const startedAt = Date.now();
    try {
      for (let i = 0; i < RUNS; i++) {
        // `status` is the launcher's cheapest mode: exit 1 (no screen) says our launcher ran;
        // the bootstrap's own refusals exit 2, the trap's launcher exits 0.
        const { command, input } = launcherCommand(sandbox, key, { mode: 'status' });
        const result = await run(command, { input, timeoutMs: 60_000 });
        assert.equal(result.exitCode, 1, `run ${i}: ${result.stderr}`);
        assert.equal(result.stderr, '', `run ${i}`);
        assertUntouched(place, key, trap, decoy, `run ${i}`, true);
      }
      const runsMs = Date.now() - startedAt;
      for (let i = 0; i < FULL_STARTS; i++) {
        await startAndCheck(place, controllerOf(), `full start ${i}`);
        await controllerOf().stop();
        assertUntouched(place, key, trap, decoy, `full start ${i}`, true);
      }
      testLog.warn(`${place.name}: ${RUNS} launcher runs under the flipper in ${runsMs} ms, then ${FULL_STARTS} full starts in ${Date.now() - startedAt - runsMs} ms`);
      assert.equal(flipper.exitCode, null, 'the flipper ran throughout');
    } finally {
      place.asRoot('touch "$1"', stop);
      await waitFor(() => flipper.exitCode !== null, 10_000, 50, 'the flipper to end').catch(() => flipper.kill('SIGKILL'));
      place.asRoot('rm -rf "$1" "$2"', decoy, stop);
    }
  });
}

const attacker = { name: '', uid: 0, gid: 0 };

before(() => {
  Object.assign(attacker, hostUser());
});

after(() => {
  for (const child of children) {
    child.kill('SIGKILL');
  }
  // A killed attacker may not have been torn down yet (userdel once refused it so): removeUser
  // ends and waits for every process the user still has.
  removeUser(attacker.name);
  rmSync(hostTmp, { recursive: true, force: true });
  rmSync(sshTmp, { recursive: true, force: true });
});

describe('on this machine (gateway): the victim is the user running VS Code', () => {
  const config = settings({ placement: 'gateway' });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  let place: Place;
  before(() => {
    place = hostPlace('gateway', process.getuid!(), hostTmp, config, async () => hostSandbox('docker'), attacker);
  });
  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
  });
  attacks(() => place, () => controller);

  test('$XDG_RUNTIME_DIR is preferred where it exists', async () => {
    const xdg = mkdtempSync(`${hostTmp}/xdg-`);
    process.env.XDG_RUNTIME_DIR = xdg;
    try {
      const status = await controller.start();
      assert.equal(status.screen!.runtimeDir, `${xdg}/botscreen/${config.workspaceKey}`);
      await controller.stop();
    } finally {
      delete process.env.XDG_RUNTIME_DIR;
    }
  });
});

describe('the relay connects only to a socket of its own user', () => {
  /** Runs the relay on this machine with bytes on its stdin; its exit code and stderr. */
  async function relayTo(path: string): Promise<{ exitCode: number | null; stderr: string; stdout: string }> {
    const relay = openStream(rfbRelayCommand(hostSandbox('local'), path));
    let stdout = '';
    relay.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('latin1')));
    relay.stdin.write('RFB 003.008\nsecret keys');
    setTimeout(() => relay.stdin.end(), 1_000);
    const done = await Promise.race([relay.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 30_000))]);
    relay.kill();
    return { exitCode: done?.exitCode ?? null, stderr: done?.stderr ?? 'did not exit', stdout };
  }

  test('a symlink, a socket in another user\'s dir, or one whose server runs as another user: refused, not a byte sent', async () => {
    const place = hostPlace('relay', process.getuid!(), hostTmp, settings(), async () => hostSandbox('local'), attacker);
    const trap = `${hostTmp}/atk-relay-${tag}`;
    place.asAttacker('mkdir -m 0777 "$1" && : >"$1/log" && chmod 0666 "$1/log"', trap);
    place.spawnAttacker(LOGGER, `${trap}/log`, `${trap}/a`, `${trap}/b`);
    const log = () => readFileSync(`${trap}/log`, 'utf8').split('\n').filter((l) => l && l !== 'ready');
    await waitFor(() => readFileSync(`${trap}/log`, 'utf8').includes('ready'), 20_000, 50, 'the attacker\'s logger');
    const own = mkdtempSync(`${hostTmp}/own-`);

    symlinkSync(`${trap}/a`, `${own}/link`);
    const viaLink = await relayTo(`${own}/link`);
    assert.equal(viaLink.exitCode, 2);
    assert.match(viaLink.stderr, /is a symlink|not a socket of uid/);
    const direct = await relayTo(`${trap}/a`);
    assert.equal(direct.exitCode, 2);
    assert.match(direct.stderr, /not private to uid|not a socket of uid/);
    assert.deepEqual(log(), [], 'no connection at all: refused before connecting');

    // The attacker's listening socket moved into our own dir and given to us: the path checks
    // pass, the server's uid (SO_PEERCRED) does not.
    execFileSync('sh', ['-c', 'mv "$1" "$2" && chown 0:0 "$2"', 'sh', `${trap}/b`, `${own}/b`]);
    const moved = await relayTo(`${own}/b`);
    assert.equal(moved.exitCode, 2);
    assert.match(moved.stderr, /does not run as uid/);
    assert.deepEqual(log().filter((l) => l.startsWith('bytes')), [], 'not a byte sent');
    assert.equal(moved.stdout, '', 'nothing of the attacker\'s relayed back');
  });
});

describe('on this machine (gateway), X displays :20-:99 held by another user', () => {
  // X locks live in the real /tmp of this machine, shared with other users' screens: this test
  // holds them inside a mount namespace of its own (a fresh tmpfs on /tmp, as at boot). The
  // network namespace, and with it the abstract X socket names, stays this machine's.
  let holder: ChildProcess | undefined;
  let nsSandbox: Sandbox;
  before(async () => {
    const child = spawn(
      'unshare',
      ['--mount', '--propagation', 'private', '--', 'sh', '-c', 'mount -t tmpfs -o mode=1777 tmpfs /tmp && mkdir -m 1777 /tmp/.X11-unix && echo ready && exec sleep 3600'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    holder = child;
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`unshare exited with ${code}`)));
    });
    const enter = ['-t', String(child.pid), '-m', '--', 'env', 'TMPDIR=/tmp'];
    nsSandbox = { ...hostSandbox('local'), exec: (argv) => ({ command: 'nsenter', args: [...enter, ...argv] }) };
  });
  after(() => holder?.kill('SIGKILL'));

  test('the screen starts on a display of its own, none of the attacker\'s sockets is connected to', async () => {
    const enter = ['-t', String(holder!.pid), '-m', '--'];
    const setpriv = ['setpriv', '--reuid', String(attacker.uid), '--regid', String(attacker.gid), '--clear-groups', '--'];
    const asAttacker = (script: string, ...args: string[]) => execFileSync('nsenter', [...enter, ...setpriv, 'sh', '-c', script, 'sh', ...args], { encoding: 'utf8' });
    const trap = asAttacker('d=$(mktemp -d /tmp/atk.XXXXXX) && chmod 0777 "$d" && : >"$d/log" && chmod 0666 "$d/log" && echo "$d"').trim();
    // The first display past the held ones that nobody on this machine listens on: squatted on
    // its abstract name, the one X clients try first.
    const bound = readFileSync('/proc/net/unix', 'utf8');
    let squat = 100;
    while (bound.includes(`/tmp/.X11-unix/X${squat}\n`)) {
      squat++;
    }
    const xSockets = [...Array.from({ length: 10 }, (_, i) => `/tmp/.X11-unix/X${20 + i}`), `@/tmp/.X11-unix/X${squat}`];
    const logger = spawn('nsenter', [...enter, ...setpriv, '/usr/bin/python3', '-c', LOGGER, `${trap}/log`, ...xSockets], { stdio: 'ignore' });
    children.push(logger);
    const log = () => execFileSync('nsenter', [...enter, 'cat', `${trap}/log`], { encoding: 'utf8' });
    await waitFor(() => log().includes('ready'), 20_000, 50, 'the attacker\'s logger');
    // The locks name a live pid of the attacker's (its logger); one is a FIFO, one a symlink.
    asAttacker(
      'for n in $(seq 20 99); do echo "     $1" >/tmp/.X$n-lock; done; ' +
        'rm -f /tmp/.X25-lock && mkfifo /tmp/.X25-lock; rm -f /tmp/.X26-lock && ln -s /dev/zero /tmp/.X26-lock',
      String(logger.pid),
    );
    const key = settings().workspaceKey;
    const start = launcherCommand(nsSandbox, key, { mode: 'start', geometry: '1024x640', timeoutSeconds: 60 });
    const result = await run(start.command, { input: start.input, timeoutMs: 90_000 });
    try {
      assert.equal(result.exitCode, 0, result.stderr);
      const screen = parsePublished(result.stdout)!;
      const n = Number(screen.display.slice(1));
      assert.ok(n >= 100 && n !== squat, `display ${screen.display} is none of the attacker's`);
      assert.match(screen.runtimeDir, new RegExp(`^/tmp/botscreen-${process.getuid!()}/${key}$`));
      const relay = openStream(rfbRelayCommand(nsSandbox, screen.socket));
      try {
        const init = await rfbHandshake(relay.stdout, relay.stdin);
        assert.equal(init.name, 'Bot Screen');
      } finally {
        relay.kill();
      }
    } finally {
      const stop = launcherCommand(nsSandbox, key, { mode: 'stop' });
      await run(stop.command, { input: stop.input, timeoutMs: 30_000 });
    }
    assert.deepEqual(log().split('\n').filter((l) => l && l !== 'ready'), [], 'the attacker\'s X sockets saw nothing');
    logger.kill('SIGKILL');
  });
});

describe('inside the sandbox container: the victim is pn', () => {
  const config = settings({ geometry: '1024x640' });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
  let place: Place;
  let containerId = '';
  before(async () => {
    const sandbox = await new DockerBackend(config.docker, config.workspaceKey, testLog).prepare();
    containerId = sandbox.id;
    execFileSync('docker', ['exec', '-u', 'root', containerId, 'useradd', '--no-create-home', '--shell', '/bin/sh', 'bsatk']);
    place = dockerPlace(containerId, config, async () => sandbox);
  });
  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
  });
  attacks(() => place, () => controller);

  test('X displays :20-:99 held by the attacker (locks, sockets, a FIFO lock, an abstract-socket squat) are skipped', async () => {
    resetVictim(place);
    // What a real system has: /tmp/.X11-unix made by root at boot.
    place.asRoot('mkdir -p /tmp/.X11-unix && chmod 1777 /tmp/.X11-unix');
    const pid = place.asAttacker(
      'sleep 3600 >/dev/null 2>&1 & p=$!; for n in $(seq 20 99); do echo "     $p" >/tmp/.X$n-lock; done; ' +
        'rm -f /tmp/.X25-lock && mkfifo /tmp/.X25-lock; rm -f /tmp/.X26-lock && ln -s /dev/zero /tmp/.X26-lock; echo $p',
    ).trim();
    const xSockets = [...Array.from({ length: 10 }, (_, i) => `/tmp/.X11-unix/X${20 + i}`), '@/tmp/.X11-unix/X100'];
    const trap = await plantTrap(place, config.workspaceKey, xSockets);
    try {
      const display = await startAndCheck(place, controller, 'displays held');
      assert.ok(Number(display.slice(1)) > 100, `display ${display} is none of the attacker's`);
      // The desktop's own X clients (xfwm4, the panel) reached our Xvnc, not a squatter.
      const xdpy = execFileSync(
        'docker',
        ['exec', '-u', 'pn', '-e', `DISPLAY=${display}`, '-e', `XAUTHORITY=${controller.status.screen!.env.XAUTHORITY}`, containerId, 'xdpyinfo'],
        { encoding: 'utf8' },
      );
      assert.match(xdpy, /vendor string:\s+The X\.Org Foundation|TigerVNC/);
      await controller.stop();
      assertUntouched(place, config.workspaceKey, trap, undefined, 'displays held');
    } finally {
      place.asRoot('kill "$1"; rm -f /tmp/.X[0-9]*-lock', pid);
    }
  });
});

describe('on the ssh host: the victim is the login user', () => {
  let sshd: Sshd;
  let config: ScreenSettings;
  let controller: ScreenController;
  let place: Place;
  let controlTrap = '';
  before(async () => {
    // The attacker takes this machine's control-socket dir name before anything of ours ran,
    // with a listening socket where our master would be.
    const named = `${hostTmp}/botscreen-ssh-${process.getuid!()}`;
    execFileSync('setpriv', ['--reuid', String(attacker.uid), '--regid', String(attacker.gid), '--clear-groups', '--', 'mkdir', '-m', '0777', named]);
    sshd = await startSshd({ env: { TMPDIR: sshTmp } });
    config = settings({ backend: 'ssh', backendRaw: 'ssh', geometry: '1024x640', ssh: sshd.settings() });
    controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());
    const hash = controlPath(sshDestination(config.ssh)).split('/').pop()!;
    controlTrap = `${named}/${hash}`;
    place = hostPlace('ssh', sshd.uid, sshTmp, config, () => new SshBackend(config.ssh, testLog).prepare(), attacker);
    const log = `${hostTmp}/atk-ssh-${tag}.log`;
    execFileSync('setpriv', ['--reuid', String(attacker.uid), '--regid', String(attacker.gid), '--clear-groups', '--', 'sh', '-c', ': >"$1"', 'sh', log]);
    place.spawnAttacker(LOGGER, log, controlTrap);
    await waitFor(() => existsSync(controlTrap), 10_000, 50, 'the attacker\'s control socket');
  });
  after(async () => {
    await controller?.stop().catch(() => undefined);
    controller?.dispose();
    if (sshd) {
      await new SshBackend(config.ssh, testLog).closeMaster();
      await sshd.stop();
    }
  });

  test('the control socket dir pre-created by the attacker is skipped for a private one', () => {
    const path = controlPath(sshDestination(config.ssh));
    assert.match(path, new RegExp(`^${hostTmp}/botscreen-ssh-${process.getuid!()}\\.[A-Za-z0-9]{6}/[0-9a-f]{12}$`));
    assert.equal(execFileSync('stat', ['-c', '%u %a', path.slice(0, path.lastIndexOf('/'))], { encoding: 'utf8' }).trim(), `${process.getuid!()} 700`);
  });

  attacks(() => place, () => controller);

  test('the attacker\'s control socket never saw a connection', () => {
    const log = execFileSync('cat', [`${hostTmp}/atk-ssh-${tag}.log`], { encoding: 'utf8' });
    assert.deepEqual(log.split('\n').filter((l) => l && l !== 'ready'), []);
  });
});
