// The sandbox image's tag and build: the default tag is the content hash of the shipped context
// (one definition, scripts/sandbox-context.mjs), and the step parser reads real captured output
// of `docker build` (the classic builder of Debian's docker.io 20.10 with a 28.x CLI) and `podman build`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  SANDBOX_CONTEXT_HASH, SANDBOX_IMAGE, buildCommand, isOwnImage, parseBuildStep, type BuildOptions, type BuildStep,
} from '../../src/core/sandboxImage';

const fixture = (name: string) => readFileSync(join('test/fixtures', name), 'utf8');
const steps = (output: string): BuildStep[] => output.split('\n').map(parseBuildStep).filter((s): s is BuildStep => s !== undefined);
const tagOf = (dir?: string) =>
  execFileSync('node', ['--input-type=module', '-e', 'import { imageTag } from "./scripts/sandbox-context.mjs"; console.log(imageTag(process.argv[1] || undefined))', dir ?? ''], {
    encoding: 'utf8',
  }).trim();

test('the default image is the local content-hash tag the rig script computes too', () => {
  assert.match(SANDBOX_IMAGE, /^bot-screen-sandbox:[0-9a-f]{12}$/);
  assert.equal(SANDBOX_IMAGE, execFileSync('node', ['scripts/sandbox-context.mjs'], { encoding: 'utf8' }).trim());
  assert.equal(SANDBOX_CONTEXT_HASH, execFileSync('node', ['scripts/sandbox-context.mjs', '--hash'], { encoding: 'utf8' }).trim());
  assert.ok(SANDBOX_IMAGE.endsWith(SANDBOX_CONTEXT_HASH.slice(0, 12)));
});

test('a changed build context changes the tag; the same content gives the same tag', () => {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-context-'));
  for (const file of readdirSync('sandbox')) {
    writeFileSync(join(dir, file), readFileSync(join('sandbox', file)));
  }
  assert.equal(tagOf(dir), SANDBOX_IMAGE, 'the hash depends on content, not on where the context lies');
  writeFileSync(join(dir, 'Dockerfile'), `${readFileSync('sandbox/Dockerfile', 'utf8')}\n# changed\n`);
  assert.notEqual(tagOf(dir), SANDBOX_IMAGE);
  const changed = tagOf(dir);
  writeFileSync(join(dir, 'extra.conf'), 'x');
  assert.notEqual(tagOf(dir), changed, 'a file added to the context counts');
});

test('only our own local repository counts as ours (never pulled)', () => {
  assert.ok(isOwnImage(SANDBOX_IMAGE));
  assert.ok(isOwnImage('bot-screen-sandbox:0123456789ab'));
  assert.ok(isOwnImage('localhost/bot-screen-sandbox:0123456789ab'), "podman's name for a local tag");
  for (const other of ['botscreen/sandbox:desktop', 'example.org/bot-screen-sandbox:1', 'bot-screen-sandbox-x:1', 'debian:bookworm-slim']) {
    assert.equal(isOwnImage(other), false, other);
  }
});

test('the classic builder: every step of a real build, in order, with its instruction', () => {
  const found = steps(fixture('build-classic.log'));
  assert.deepEqual(found.map((s) => s.step), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  assert.ok(found.every((s) => s.total === 13));
  assert.equal(found[1].instruction, 'FROM ${BASE_IMAGE}');
  assert.match(found[7].instruction, /^RUN set -eux; rm -f \/etc\/apt\/sources\.list /, 'continuation whitespace collapsed');
  assert.equal(found[9].instruction, 'ENTRYPOINT ["/usr/bin/tini", "--"]');
  assert.match(found[12].instruction, /^LABEL dev\.botscreen\.recipe=[0-9a-f]{64}$/);
});

test('the classic builder: a failing build, red stderr lines and the error line are no steps', () => {
  const output = fixture('build-classic-failed.log');
  assert.deepEqual(steps(output), [
    { step: 1, total: 4, instruction: 'ARG BASE_IMAGE' },
    { step: 2, total: 4, instruction: 'FROM ${BASE_IMAGE}' },
    { step: 3, total: 4, instruction: 'ENV X=1' },
    { step: 4, total: 4, instruction: 'RUN echo going to fail >&2; exit 3' },
  ]);
  assert.equal(parseBuildStep('\x1b[91mStep 2/4 : RUN x\x1b[0m')?.step, 2, 'colour codes are removed first');
  assert.equal(parseBuildStep('Step 5/4 : RUN x'), undefined, 'a step beyond the total is no step');
  assert.equal(parseBuildStep(' ---> Running in cfb384c0e96e'), undefined);
});

test('podman: every step of a real build (podman 4.3), its stderr and layer ids are no steps', () => {
  assert.deepEqual(steps(fixture('build-podman.log')), [
    { step: 1, total: 5, instruction: 'FROM local/bookworm:minbase' },
    { step: 2, total: 5, instruction: 'ENV X=1' },
    { step: 3, total: 5, instruction: 'RUN echo podman step output >&2' },
    { step: 4, total: 5, instruction: 'LABEL a=b' },
    { step: 5, total: 5, instruction: 'LABEL "dev.botscreen.context"="h"' },
  ]);
  assert.equal(parseBuildStep('[2/2] STEP 1/3: FROM debian')?.instruction, 'FROM debian', 'a multi-stage build\'s stage prefix');
});

test('BuildKit plain progress lines parse too, should a CLI ignore DOCKER_BUILDKIT=0', () => {
  // Not captured here (this machine has no buildx): the line format BuildKit's plain progress prints.
  assert.deepEqual(parseBuildStep('#6 [2/5] RUN set -eux; apt-get update'), { step: 2, total: 5, instruction: 'RUN set -eux; apt-get update' });
  assert.equal(parseBuildStep('#1 [internal] load build definition from Dockerfile'), undefined);
});

test('the build argv: untagged (an iidfile), base and mirrors as build args, labels, --no-cache only when asked', () => {
  const options: BuildOptions = {
    cli: 'docker', flavour: 'docker', contextDir: '/ext/sandbox', tag: SANDBOX_IMAGE, contextHash: 'h',
    base: 'local/bookworm:minbase', debianMirror: 'http://m/debian', debianSecurityMirror: 'http://m/sec', noCache: false,
    onLine: () => undefined, onStep: () => undefined,
  };
  const { command, args } = buildCommand(options, '/tmp/x/iid');
  assert.equal(command, 'docker');
  assert.deepEqual(args, [
    'build', '--force-rm', '--iidfile', '/tmp/x/iid',
    '--build-arg', 'BASE_IMAGE=local/bookworm:minbase',
    '--build-arg', 'DEBIAN_MIRROR=http://m/debian',
    '--build-arg', 'DEBIAN_SECURITY_MIRROR=http://m/sec',
    '--label', 'dev.botscreen.base=local/bookworm:minbase',
    '--label', 'dev.botscreen.context=h',
    '--file', '/ext/sandbox/Dockerfile',
    '--', '/ext/sandbox',
  ]);
  assert.ok(!args.includes('-t') && !args.includes('--tag'), 'the tag is set only after success');
  assert.ok(buildCommand({ ...options, noCache: true }, '/i').args.includes('--no-cache'));
});
