import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DockerBackend } from '../../src/core/backends/docker';
import { engineCli } from '../../src/core/backends/dockerCli';
import { sshDestination } from '../../src/core/backends/ssh';
import { PROBLEM_CODES, ScreenError, type Problem, type ProblemCode } from '../../src/core/problem';
import { fixesFor, fixLabel, type FixStrings } from '../../src/fixes';

// Labels injected in place of vscode.l10n, so the table is checked under plain Node.
const STRINGS: FixStrings = {
  openSettings: 'Open Settings',
  retry: 'Retry',
  buildImage: 'Build Image',
  startDocker: 'Start Docker',
  installDocker: 'Install Docker',
  allowHost: 'Allow on this machine…',
  installHostDesktop: 'Install Desktop',
  manageTrust: 'Manage Workspace Trust',
  showLogs: 'Show Logs',
};

// Every kind, in every shape a backend produces (the Record type makes the compiler insist on
// each kind; the test below checks the run-time list too).
const SAMPLES: Record<ProblemCode, Problem[]> = {
  refused: [{ code: 'refused', backend: 'modal' }, { code: 'refused', backend: 'no-such-backend' }],
  cliMissing: ['docker', 'podman', 'ssh', 'apptainer', 'kubernetes'].map((b) => ({ code: 'cliMissing', cli: b, setting: `botScreen.sandbox.${b}.path` })),
  daemonDown: [{ code: 'daemonDown', cli: 'docker', detail: 'Cannot connect to the Docker daemon' }],
  badImage: [
    { code: 'badImage', image: 'Bad Image', setting: 'botScreen.sandbox.docker.image' },
    { code: 'badImage', image: 'x', setting: 'botScreen.sandbox.apptainer.image' },
  ],
  badGeometry: [{ code: 'badGeometry', geometry: '12x' }],
  badContainer: [{ code: 'badContainer', container: '-x', setting: 'botScreen.sandbox.podman.container' }],
  imageUnavailable: [
    { code: 'imageUnavailable', image: 'a:b', detail: 'no such image', setting: 'botScreen.sandbox.docker.image' },
    { code: 'imageUnavailable', image: 'a:b', detail: 'no such image', keptContainer: 'c1', setting: 'botScreen.sandbox.podman.image' },
  ],
  containerNotRunning: [{ code: 'containerNotRunning', container: 'agent', setting: 'botScreen.sandbox.docker.container' }],
  missingBinaries: [
    { code: 'missingBinaries', onHost: true, names: ['Xvnc'] },
    { code: 'missingBinaries', onHost: false, names: ['Xvnc'], setting: 'botScreen.sandbox.docker.image' },
    { code: 'missingBinaries', onHost: false, names: ['Xvnc'] },
  ],
  startTimeout: [{ code: 'startTimeout', log: 'Xvnc: fatal' }],
  sandboxGone: [{ code: 'sandboxGone' }],
  desktopStopped: [{ code: 'desktopStopped' }],
  sandboxUnknown: [{ code: 'sandboxUnknown', name: 'c1' }],
  notRunning: [{ code: 'notRunning' }],
  commandFailed: [{ code: 'commandFailed', what: 'launcher', detail: 'exit 1' }],
  badHost: [{ code: 'badHost', host: '-oProxyCommand=x', setting: 'botScreen.sandbox.ssh.host' }, { code: 'badHost', host: '' }],
  badSshUser: [{ code: 'badSshUser', user: '-l' }],
  badPort: [{ code: 'badPort', port: '0', setting: 'botScreen.sandbox.ssh.port' }, { code: 'badPort', port: '0' }],
  badIdentityFile: [{ code: 'badIdentityFile', path: 'key' }],
  unsafeControlDir: [{ code: 'unsafeControlDir', path: '/tmp/x' }],
  sshFailed: [{ code: 'sshFailed', host: 'h', detail: 'Permission denied' }],
  badInstance: [{ code: 'badInstance', instance: '-x' }],
  badKubeName: (['pod', 'namespace', 'container', 'context'] as const).map((kind) => ({ code: 'badKubeName', kind, value: '-x' })),
  podNotSet: [{ code: 'podNotSet' }],
  podNotFound: [{ code: 'podNotFound', pod: 'p', namespace: 'n' }],
  podNotRunning: [{ code: 'podNotRunning', pod: 'p', phase: 'Pending' }],
  imageMissing: [
    { code: 'imageMissing', image: 'bot-screen-sandbox:0123456789ab', buildable: true },
    { code: 'imageMissing', image: 'bot-screen-sandbox:ba9876543210', buildable: false, keptContainer: 'c1' },
  ],
  untrusted: [{ code: 'untrusted' }],
  needsConsent: [
    { code: 'needsConsent', declined: false, question: { kind: 'newHost', host: 'ssh://u@h:22' } },
    { code: 'needsConsent', declined: true, question: { kind: 'replaceContainer', backend: 'docker', container: 'c1', currentImage: 'a:1', image: 'b:2' } },
  ],
};

// Built to out/test/unit/: the manifest is three levels up.
const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
const SETTINGS = new Set(
  (Array.isArray(manifest.contributes.configuration) ? manifest.contributes.configuration : [manifest.contributes.configuration]).flatMap(
    (section: { properties: Record<string, unknown> }) => Object.keys(section.properties),
  ),
);

describe('every problem offers its fix', () => {
  test('the run-time list of kinds is the list of samples', () => {
    assert.deepEqual([...PROBLEM_CODES].sort(), Object.keys(SAMPLES).sort());
  });

  for (const code of PROBLEM_CODES) {
    test(`${code}: at least one fix, each labelled, each setting a real contributed setting`, () => {
      assert.ok(SAMPLES[code].length > 0);
      for (const problem of SAMPLES[code]) {
        const fixes = fixesFor(problem);
        assert.ok(fixes.length >= 1, `${JSON.stringify(problem)} has no fix`);
        for (const fix of fixes) {
          assert.ok(fixLabel(fix, STRINGS).length > 0);
          if (fix.kind === 'openSettings') {
            assert.ok(SETTINGS.has(fix.setting), `${fix.setting} (for ${code}) is not a contributed setting`);
          }
        }
        assert.equal(new Set(fixes.map((fix) => JSON.stringify(fix))).size, fixes.length, `${code} offers a fix twice`);
      }
    });
  }

  test('a missing CLI opens the settings at that backend\'s own path setting', () => {
    for (const problem of SAMPLES.cliMissing) {
      assert.deepEqual(fixesFor(problem)[0], { kind: 'openSettings', setting: (problem as { setting: string }).setting });
    }
  });

  test('a refusal of a known backend offers the opt-in; an unknown backend name only the backend setting', () => {
    assert.deepEqual(fixesFor({ code: 'refused', backend: 'modal' })[0], { kind: 'allowHost' });
    assert.deepEqual(fixesFor({ code: 'refused', backend: 'no-such-backend' }), [{ kind: 'openSettings', setting: 'botScreen.sandbox.backend' }]);
  });

  test('Docker down offers Start Docker; an image problem of Docker or Podman offers Build Image, of Apptainer not', () => {
    assert.deepEqual(fixesFor(SAMPLES.daemonDown[0])[0], { kind: 'startDocker' });
    assert.deepEqual(fixesFor(SAMPLES.imageUnavailable[1])[0], { kind: 'buildImage' });
    assert.ok(!fixesFor({ code: 'missingBinaries', onHost: false, names: ['Xvnc'], setting: 'botScreen.sandbox.apptainer.image' }).some((f) => f.kind === 'buildImage'));
  });
});

describe('problems from real backends name the real setting', () => {
  for (const flavour of ['docker', 'podman'] as const) {
    test(`${flavour}: a CLI that does not exist is cliMissing at botScreen.sandbox.${flavour}.path`, async () => {
      const log = { debug() {}, info() {}, warn() {}, error() {} };
      const backend = new DockerBackend(
        { cli: '/nonexistent/botscreen-no-cli', image: 'x:y', container: '', pidsLimit: 2048, imagePinned: false },
        'k',
        log,
        engineCli('/nonexistent/botscreen-no-cli', flavour),
      );
      await assert.rejects(backend.prepare(), (err: unknown) => {
        assert.ok(err instanceof ScreenError);
        assert.deepEqual(err.problem, { code: 'cliMissing', cli: '/nonexistent/botscreen-no-cli', setting: `botScreen.sandbox.${flavour}.path` });
        return true;
      });
    });
  }

  test('ssh: a host setting that is an option is badHost at botScreen.sandbox.ssh.host', () => {
    assert.throws(
      () => sshDestination({ host: '-oProxyCommand=x', user: '', port: undefined }),
      (err: unknown) => err instanceof ScreenError && err.problem.code === 'badHost' && err.problem.setting === 'botScreen.sandbox.ssh.host',
    );
  });
});
