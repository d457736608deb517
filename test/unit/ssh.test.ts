import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  SshBackend,
  SshCli,
  controlPath,
  privateDir,
  parseSshIdentityId,
  sshDestination,
  sshIdentityId,
  type SshSettings,
} from '../../src/core/backends/ssh';
import { ScreenError } from '../../src/core/problem';
import { shellJoin } from '../../src/core/quote';
import { testLog } from '../support/env';
import { fakeCli, nastyWords } from '../support/fixtures';

const dir = mkdtempSync(join(tmpdir(), 'botscreen-ssh-unit-'));
const key = join(dir, 'id_ed25519');
writeFileSync(key, 'not really a key\n', { mode: 0o600 });

function settings(overrides: Partial<SshSettings> = {}): SshSettings {
  return { host: 'box.example', user: 'agent', port: 2222, identityFile: key, path: 'ssh', ...overrides };
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof ScreenError ? err.problem.code : String(err);
  }
}

describe('ssh argv', () => {
  const destination = { host: 'box.example', user: 'agent', port: 2222 };
  const cli = new SshCli('ssh', destination, key);

  test('the exact prefix: batch mode, accept-new, timeouts, one control socket per destination, port, key, user', () => {
    const { command, args } = cli.exec(['python3', '-c', 'print(1)'], true);
    assert.equal(command, 'ssh');
    assert.deepEqual(args, [
      '-o', 'BatchMode=yes',
      '-o', 'StrictHostKeyChecking=accept-new',
      '-o', 'ConnectTimeout=10',
      '-o', 'ControlMaster=auto',
      '-o', 'ControlPersist=300',
      '-o', `ControlPath=${controlPath(destination)}`,
      '-p', '2222',
      '-i', key, '-o', 'IdentitiesOnly=yes',
      '-l', 'agent',
      '-T', '-e', 'none',
      '--', 'box.example', "python3 -c 'print(1)'",
    ]);
  });

  test('probes add -n; no tty, ever; optional parts are left out when unset', () => {
    const bare = new SshCli('/opt/ssh', { host: 'h', user: '', port: undefined }, undefined);
    const { command, args } = bare.exec(['true'], false);
    assert.equal(command, '/opt/ssh');
    assert.ok(args.includes('-n'));
    for (const flag of ['-t', '-tt', '-p', '-i', '-l']) {
      assert.ok(!args.includes(flag), `no ${flag}`);
    }
    assert.deepEqual(args.slice(-3), ['--', 'h', 'true']);
    assert.ok(!cli.exec(['cat'], true).args.includes('-n'), 'streams keep stdin');
  });

  test('the remote argv is ONE word that a login shell splits back into the same 1,000 words', () => {
    const words = nastyWords(1000);
    const { args } = cli.exec(['printf', '%s\\0', ...words], true);
    const oneWord = args[args.length - 1];
    assert.equal(args[args.length - 2], 'box.example');
    assert.equal(oneWord, shellJoin(['printf', '%s\\0', ...words]));
    // What sshd does with it: `$SHELL -c <the joined words>`.
    const back = execFileSync('bash', ['-c', oneWord]).toString('utf8').split('\0').slice(0, -1);
    assert.deepEqual(back, words);
  });

  test('the control socket path is short, private to this user, and differs per user, host and port', () => {
    const path = controlPath(destination);
    assert.match(path, new RegExp(`^/tmp/botscreen-ssh-${process.getuid!()}/[0-9a-f]{12}$`));
    assert.ok(path.length < 60, 'leaves room under the 104-byte socket limit for ssh\'s temporary suffix');
    assert.notEqual(controlPath({ ...destination, user: 'other' }), path);
    assert.notEqual(controlPath({ ...destination, port: 22 }), path);
    assert.notEqual(controlPath({ ...destination, host: 'box2.example' }), path);
    assert.equal(controlPath({ ...destination }), path);
  });

  test('exitMaster asks the same control socket to exit', () => {
    const { args } = cli.exitMaster();
    assert.ok(args.includes(`ControlPath=${controlPath(destination)}`));
    assert.deepEqual(args.slice(-4), ['-O', 'exit', '--', 'box.example']);
  });
});

describe('ssh settings are validated before anything runs', () => {
  const badHosts = ['-oProxyCommand=touch /tmp/x', '-p22', 'a b', 'host\nx', 'h\tx', '', 'h;id', 'h$(id)', 'h`id`', 'user@host', 'h|x', "h'x", 'h/x', 'h\u0000'];
  for (const host of badHosts) {
    test(`host ${JSON.stringify(host)} is refused`, () => {
      assert.equal(codeOf(() => sshDestination(settings({ host }))), 'badHost');
    });
  }

  for (const host of ['box.example', '127.0.0.1', '::1', 'fe80::1%eth0', 'my_alias', 'a-b']) {
    test(`host ${JSON.stringify(host)} is accepted`, () => {
      assert.equal(codeOf(() => sshDestination(settings({ host }))), 'ok');
    });
  }

  for (const user of ['-oX', 'a b', 'a;b', 'x$(id)', 'a\nb', 'root@x']) {
    test(`user ${JSON.stringify(user)} is refused`, () => {
      assert.equal(codeOf(() => sshDestination(settings({ user }))), 'badSshUser');
    });
  }

  for (const port of [0, -1, 65536, 1.5, Number.NaN, '22; id' as unknown as number]) {
    test(`port ${String(port)} is refused`, () => {
      assert.equal(codeOf(() => sshDestination(settings({ port }))), 'badPort');
    });
  }

  test('ports 1 and 65535 and an unset port are accepted', () => {
    assert.equal(sshDestination(settings({ port: 1 })).port, 1);
    assert.equal(sshDestination(settings({ port: 65535 })).port, 65535);
    assert.equal(sshDestination(settings({ port: undefined })).port, undefined);
  });

  test('a missing, relative or directory identity file is refused', async () => {
    for (const identityFile of [join(dir, 'nope'), 'relative/key', dir, '~/definitely-not-a-key-botscreen']) {
      const backend = new SshBackend(settings({ identityFile }), testLog);
      await assert.rejects(backend.prepare(), (err: unknown) => err instanceof ScreenError && err.problem.code === 'badIdentityFile');
    }
  });

  test('bad settings never start the ssh client', async () => {
    const ssh = fakeCli('ssh', 'exit 0');
    const cases: Array<[Partial<SshSettings>, string]> = [
      [{ host: '-oProxyCommand=touch /tmp/x' }, 'badHost'],
      [{ user: '-oProxyCommand=x' }, 'badSshUser'],
      [{ port: 70000 }, 'badPort'],
      [{ identityFile: join(dir, 'missing') }, 'badIdentityFile'],
    ];
    for (const [overrides, code] of cases) {
      const backend = new SshBackend(settings({ ...overrides, path: ssh.path }), testLog);
      for (const call of [() => backend.prepare(), () => backend.find()]) {
        await assert.rejects(call(), (err: unknown) => err instanceof ScreenError && err.problem.code === code);
      }
    }
    assert.deepEqual(ssh.calls(), []);
  });

  test('a missing ssh client is cliMissing', async () => {
    const backend = new SshBackend(settings({ path: join(dir, 'no-such-ssh') }), testLog);
    await assert.rejects(backend.prepare(), (err: unknown) => err instanceof ScreenError && err.problem.code === 'cliMissing' && err.problem.cli.endsWith('no-such-ssh'));
  });
});

describe('ssh login, liveness and markers', () => {
  test('prepare logs in once with a probe; a failed login is sshFailed with ssh\'s own words', async () => {
    const ok = fakeCli('ssh', 'exit 0');
    const sandbox = await new SshBackend(settings({ path: ok.path }), testLog).prepare();
    assert.equal(sandbox.backend, 'ssh');
    assert.equal(sandbox.onHost, false);
    assert.equal(sandbox.id, 'ssh://agent@box.example:2222');
    const [probe] = ok.calls();
    assert.ok(probe.includes('-n'));
    assert.deepEqual(probe.slice(-3), ['--', 'box.example', 'true']);

    const denied = fakeCli('ssh', 'echo "agent@box.example: Permission denied (publickey)." >&2; exit 255');
    await assert.rejects(
      new SshBackend(settings({ path: denied.path }), testLog).prepare(),
      (err: unknown) => err instanceof ScreenError && err.problem.code === 'sshFailed' && /Permission denied/.test(err.problem.detail),
    );
  });

  test('liveness: a login is alive; a refused connection or timeout is unknown, never gone', async () => {
    const alive = fakeCli('ssh', 'exit 0');
    const backend = new SshBackend(settings({ path: alive.path }), testLog);
    const sandbox = await backend.find();
    assert.equal(await backend.liveness(sandbox!), 'alive');
    const refused = fakeCli('ssh', 'echo "ssh: connect to host box.example port 2222: Connection refused" >&2; exit 255');
    const down = new SshBackend(settings({ path: refused.path }), testLog);
    assert.equal(await down.liveness((await down.find())!), 'unknown');
    const failing = fakeCli('ssh', 'exit 1');
    const other = new SshBackend(settings({ path: failing.path }), testLog);
    assert.equal(await other.liveness((await other.find())!), 'unknown');
  });

  test('a marker\'s destination round-trips, IPv6 too, and wins over the settings', async () => {
    for (const d of [
      { host: 'box.example', user: 'agent', port: 2222 },
      { host: '::1', user: '', port: 22 },
      { host: 'alias', user: 'x', port: undefined },
    ]) {
      assert.deepEqual(parseSshIdentityId(sshIdentityId(d)), d);
    }
    const ssh = fakeCli('ssh', 'exit 0');
    const backend = new SshBackend(settings({ host: 'new.example', path: ssh.path }), testLog);
    const sandbox = await backend.fromIdentity({ backend: 'ssh', id: 'ssh://old@old.example:2200', name: 'old' });
    const { args } = sandbox.exec(['true'], { interactive: false });
    assert.deepEqual(args.slice(-3), ['--', 'old.example', 'true']);
    assert.ok(args.includes('old') && args.includes('2200'));
    assert.deepEqual(ssh.calls(), [], 'fromIdentity runs nothing');
  });

  test('a tampered marker cannot smuggle options in', async () => {
    const backend = new SshBackend(settings(), testLog);
    for (const id of ['ssh://-oProxyCommand=id', 'ssh://a@b c', 'ssh://x@h:99999', 'docker://x', 'ssh://-l@h']) {
      await assert.rejects(backend.fromIdentity({ backend: 'ssh', id, name: id }), (err: unknown) => err instanceof ScreenError);
    }
  });
});

describe('the control socket directory', () => {
  test('is created 0700 and named by its physical path', () => {
    const base = mkdtempSync(join(tmpdir(), 'botscreen-ctl-'));
    const alias = join(tmpdir(), `botscreen-ctl-alias-${process.pid}`);
    symlinkSync(base, alias);
    try {
      const path = privateDir(join(alias, 'ctl'));
      assert.equal(path, join(realpathSync(base), 'ctl'), 'no symlink in what is used afterwards');
      assert.equal(lstatSync(path).mode & 0o777, 0o700);
    } finally {
      rmSync(alias);
      rmSync(base, { recursive: true });
    }
  });

  test('a too-open one, a symlink, another user\'s directory or an open parent is not used', () => {
    const base = mkdtempSync(join(tmpdir(), 'botscreen-ctl-'));
    try {
      const open = join(base, 'open');
      mkdirSync(open, { mode: 0o700 });
      chmodSync(open, 0o755);
      assert.equal(privateDir(open), undefined, 'a socket may have been planted while it was open');
      assert.equal(lstatSync(open).mode & 0o777, 0o755, 'left as it was');
      const target = join(base, 'elsewhere');
      mkdirSync(target, { mode: 0o700 });
      const link = join(base, 'link');
      symlinkSync(target, link);
      assert.equal(privateDir(link), undefined);
      const shared = join(base, 'shared');
      mkdirSync(shared);
      chmodSync(shared, 0o777);
      assert.equal(privateDir(join(shared, 'ctl')), undefined, 'anyone could rename it away');
      chmodSync(shared, 0o1777);
      assert.ok(privateDir(join(shared, 'ctl')), 'a sticky parent like /tmp is fine');
      if (process.getuid!() === 0) {
        const foreign = join(base, 'foreign');
        mkdirSync(foreign, { mode: 0o700 });
        chownSync(foreign, 65534, 65534);
        assert.equal(privateDir(foreign), undefined);
      }
    } finally {
      rmSync(base, { recursive: true });
    }
  });
});
