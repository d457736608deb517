// Quoting for real: 1,000 generated argv words and env values come back byte-exact through
// `docker exec` (a real container) and through `ssh` (a throwaway sshd, where the whole remote
// command is one shell-quoted word that the login shell splits again).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { DockerCli } from '../../src/core/backends/dockerCli';
import { SshBackend } from '../../src/core/backends/ssh';
import type { Sandbox } from '../../src/core/sandbox';
import { IMAGE, sh, testLog } from '../support/env';
import { nastyWords } from '../support/fixtures';
import { startSshd, type Sshd } from '../support/sshd';

const WORDS = nastyWords(1000, 11);

/** Prints each env value BSQ_0..BSQ_{n-1} followed by a NUL, as raw bytes. */
const PRINT_ENV = 'import os,sys\nn=int(sys.argv[1])\nsys.stdout.buffer.write(b"".join(os.environb[b"BSQ_%d" % i] + b"\\0" for i in range(n)))';

function nulJoined(words: readonly string[]): Buffer {
  return Buffer.concat(words.map((w) => Buffer.concat([Buffer.from(w, 'utf8'), Buffer.from([0])])));
}

/** Runs a Sandbox's command directly and returns raw stdout bytes. */
function runBytes(sandbox: Sandbox, argv: string[]): Buffer {
  const { command, args } = sandbox.exec(argv, { interactive: false });
  return execFileSync(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
}

function roundTrips(sandbox: () => Sandbox): void {
  test('1,000 argv words come back byte-exact (printf)', () => {
    const out = runBytes(sandbox(), ['printf', '%s\\0', ...WORDS]);
    assert.ok(out.equals(nulJoined(WORDS)), 'argv words differ');
  });

  test('1,000 argv words come back byte-exact (python3 sys.argv)', () => {
    const code = 'import os,sys\nsys.stdout.buffer.write(b"".join(os.fsencode(a) + b"\\0" for a in sys.argv[1:]))';
    const out = runBytes(sandbox(), ['python3', '-c', code, ...WORDS]);
    assert.ok(out.equals(nulJoined(WORDS)), 'argv words differ');
  });

  test('1,000 env values come back byte-exact', () => {
    const assignments = WORDS.map((w, i) => `BSQ_${i}=${w}`);
    const out = runBytes(sandbox(), ['env', ...assignments, 'python3', '-c', PRINT_ENV, String(WORDS.length)]);
    assert.ok(out.equals(nulJoined(WORDS)), 'env values differ');
  });
}

describe('quoting through docker exec', () => {
  const name = `botscreen-quoting-${process.pid}`;
  let sandbox: Sandbox;

  before(() => {
    const id = sh('docker', ['run', '-d', '--init', '--name', name, '--label', 'test.botscreen=quoting', IMAGE, 'sleep', 'infinity']).trim();
    assert.match(id, /^[0-9a-f]{64}$/, 'the test container started');
    sandbox = new DockerCli('docker').sandbox(id, name, 'pn');
  });

  after(() => {
    sh('docker', ['rm', '-f', name]);
  });

  roundTrips(() => sandbox);
});

describe('quoting through ssh', () => {
  let sshd: Sshd;
  let backend: SshBackend;
  let sandbox: Sandbox;

  before(async () => {
    sshd = await startSshd();
    backend = new SshBackend(sshd.settings(), testLog);
    sandbox = await backend.prepare();
  });

  after(async () => {
    await backend?.closeMaster();
    await sshd?.stop();
  });

  roundTrips(() => sandbox);

  test('the joined-words bug, shown: words after the host NOT joined into one are split again', () => {
    const { command, args } = sandbox.exec(['printf', '%s\\0', 'a b', '$HOME'], { interactive: false });
    const naive = [...args.slice(0, -1), 'printf', '%s\\0', 'a b', '$HOME'];
    const wrong = execFileSync(command, naive, { stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8').split('\0');
    assert.notDeepEqual(wrong.slice(0, 2), ['a b', '$HOME'], 'ssh re-split the naive words');
    const right = execFileSync(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8').split('\0');
    assert.deepEqual(right.slice(0, 2), ['a b', '$HOME']);
  });
});
