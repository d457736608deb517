// The screen over SSH, for real: a throwaway sshd on 127.0.0.1 (test/support/sshd.ts), a local
// user `botscreen-ssh` whose login session hosts the screen, this machine's desktop packages.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { SshBackend } from '../../src/core/backends/ssh';
import { ScreenError } from '../../src/core/problem';
import { SandboxBackends } from '../../src/core/backends/registry';
import { ScreenController } from '../../src/core/screen';
import type { ScreenSettings } from '../../src/core/settings';
import { rfbHandshake } from '../support/rfb';
import { settings, sh, tempMarkers, testLog } from '../support/env';
import { startSshd, type Sshd } from '../support/sshd';

/** Processes of the ssh user that belong to this test's screen (its runtime dir names the key). */
function screenProcesses(sshd: Sshd, key: string): string[] {
  return sh('pgrep', ['-a', '-u', String(sshd.uid), '-f', `botscreen-${sshd.uid}/${key}/`]).split('\n').filter(Boolean);
}

function xvncOf(sshd: Sshd, key: string): string[] {
  return sh('pgrep', ['-a', '-u', String(sshd.uid), '-x', 'Xvnc']).split('\n').filter((line) => line.includes(`/${key}/rfb.sock`));
}

describe('the screen over ssh', () => {
  let sshd: Sshd;
  let config: ScreenSettings;
  let controller: ScreenController;
  const markers = tempMarkers();

  before(async () => {
    sshd = await startSshd();
    config = settings({ backend: 'ssh', backendRaw: 'ssh', geometry: '1024x640', ssh: sshd.settings() });
    controller = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
  });

  after(async () => {
    await controller?.stop().catch(() => undefined);
    controller?.dispose();
    if (sshd) {
      await new SshBackend(config.ssh!, testLog).closeMaster();
      await sshd.stop();
      assert.deepEqual(screenProcesses(sshd, config.workspaceKey), [], 'nothing of this screen is left');
    }
  });

  test('starts as the login user and speaks RFB 3.8 through the relay', async () => {
    const startedAt = Date.now();
    const status = await controller.start();
    testLog.warn(`ssh screen start (first login included): ${Date.now() - startedAt} ms`);
    assert.equal(status.state, 'running', JSON.stringify(status.problem));
    assert.equal(status.placement?.where, 'sandbox');
    assert.equal(status.sandbox?.backend, 'ssh');
    assert.equal(status.sandbox?.onHost, false);
    assert.equal(status.sandbox?.id, `ssh://botscreen-ssh@127.0.0.1:${sshd.port}`);
    assert.match(status.screen!.socket, new RegExp(`/botscreen-${sshd.uid}/${config.workspaceKey}/rfb\\.sock$`));
    const xvnc = xvncOf(sshd, config.workspaceKey);
    assert.equal(xvnc.length, 1, 'one Xvnc, owned by the ssh login user');
    assert.match(xvnc[0], /-rfbport -1 /);

    const relayAt = Date.now();
    const relay = controller.openRelay();
    try {
      const init = await rfbHandshake(relay.stdout, relay.stdin);
      testLog.warn(`RFB handshake over ssh: ${Date.now() - relayAt} ms`);
      assert.equal(init.banner, 'RFB 003.008\n');
      assert.ok(init.securityTypes.includes(1));
      assert.deepEqual([init.width, init.height], [1024, 640]);
    } finally {
      relay.kill();
    }
  });

  test('a reload finds the screen through the marker', async () => {
    const pid = controller.status.screen!.pid;
    const reloaded = new ScreenController(new SandboxBackends(), () => config, testLog, markers);
    try {
      await reloaded.attach();
      assert.equal(reloaded.status.state, 'running');
      assert.equal(reloaded.status.screen!.pid, pid);
    } finally {
      reloaded.dispose();
    }
  });

  test('stop leaves no Xvnc and no desktop process of the ssh user for this screen', async () => {
    await controller.stop();
    assert.equal(controller.status.state, 'stopped');
    assert.deepEqual(xvncOf(sshd, config.workspaceKey), []);
    assert.deepEqual(screenProcesses(sshd, config.workspaceKey), []);
  });

  test('a refused connection is unknown liveness, not gone', async () => {
    const backend = new SshBackend(sshd.settings({ port: 1 }), testLog);
    const sandbox = await backend.find();
    assert.equal(await backend.liveness(sandbox!), 'unknown');
  });

  test('a login that fails is reported with ssh\'s words and nothing else runs', async () => {
    const wrongUser = settings({ backend: 'ssh', backendRaw: 'ssh', ssh: sshd.settings({ user: 'nobody' }) });
    const other = new ScreenController(new SandboxBackends(), () => wrongUser, testLog, tempMarkers());
    try {
      await assert.rejects(other.start(), (err: unknown) => err instanceof ScreenError && err.problem.code === 'sshFailed' && /Permission denied/.test(err.problem.detail));
    } finally {
      other.dispose();
    }
  });

  describe('malicious settings run nothing', () => {
    const marker = `/tmp/botscreen-pwned-${process.pid}`;
    const cases: Array<[string, Partial<NonNullable<ScreenSettings['ssh']>>, string]> = [
      ['host -oProxyCommand', { host: `-oProxyCommand=touch ${marker}` }, 'badHost'],
      ['host with a shell command', { host: `127.0.0.1;touch ${marker}` }, 'badHost'],
      ['host with a space', { host: '127.0.0.1 -oProxyCommand=x' }, 'badHost'],
      ['host with a newline', { host: '127.0.0.1\ntouch' }, 'badHost'],
      ['user with an option', { user: `-oProxyCommand=touch ${marker}` }, 'badSshUser'],
      ['port 0', { port: 0 }, 'badPort'],
      ['port 65536', { port: 65536 }, 'badPort'],
      ['missing key', { identityFile: '/nonexistent/key' }, 'badIdentityFile'],
      ['missing ssh', { path: '/nonexistent/ssh' }, 'cliMissing'],
    ];
    for (const [name, overrides, code] of cases) {
      test(name, async () => {
        const before = sshd.invocations().length;
        const bad = settings({ backend: 'ssh', backendRaw: 'ssh', ssh: sshd.settings(overrides) });
        const other = new ScreenController(new SandboxBackends(), () => bad, testLog, tempMarkers());
        try {
          await assert.rejects(other.start(), (err: unknown) => err instanceof ScreenError && err.problem.code === code);
        } finally {
          other.dispose();
        }
        assert.equal(existsSync(marker), false, `${marker} must not exist`);
        assert.equal(sshd.invocations().length, before, 'ssh never ran');
      });
    }
  });
});
