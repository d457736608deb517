// The sandbox image build through the extension's own code path (src/core/sandboxImage.ts) against
// the real Docker engine: the real context with this machine's debootstrap base, a cancelled build
// and a failing build (tiny throwaway contexts, so no second full uncached build runs in the suite).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  DEFAULT_DEBIAN_MIRROR, DEFAULT_DEBIAN_SECURITY_MIRROR, SANDBOX_CONTEXT_HASH, SANDBOX_IMAGE, startBuild,
  type BuildOptions, type BuildStep,
} from '../../src/core/sandboxImage';
import { LOCAL_BASE_IMAGE, sh, testLog, waitFor } from '../support/env';

const uniq = randomBytes(4).toString('hex');
const throwaway = (name: string) => `bot-screen-test-${name}:${uniq}`;
const exists = (image: string) => sh('docker', ['image', 'inspect', '--format', '{{.Id}}', '--', image]).trim().replace(/^sha256:/, '');
const label = (image: string, key: string) => sh('docker', ['image', 'inspect', '--format', `{{ index .Config.Labels "${key}" }}`, '--', image]).trim();

function options(contextDir: string, tag: string, steps: BuildStep[], lines: string[], flavour: 'docker' | 'podman' = 'docker'): BuildOptions {
  return {
    cli: flavour,
    flavour,
    contextDir,
    tag,
    contextHash: SANDBOX_CONTEXT_HASH,
    base: LOCAL_BASE_IMAGE,
    debianMirror: DEFAULT_DEBIAN_MIRROR,
    debianSecurityMirror: DEFAULT_DEBIAN_SECURITY_MIRROR,
    noCache: false,
    onLine: (line) => lines.push(line),
    onStep: (step) => steps.push(step),
  };
}

function tinyContext(dockerfile: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-build-test-'));
  writeFileSync(join(dir, 'Dockerfile'), `ARG BASE_IMAGE\nFROM \${BASE_IMAGE}\n${dockerfile}\n`);
  return dir;
}

describe('sandbox image build', () => {
  after(() => {
    for (const tag of [throwaway('cancel'), throwaway('fail')]) {
      if (exists(tag)) {
        sh('docker', ['image', 'rm', '--', tag]);
      }
    }
  });

  test('the shipped context builds FROM the local base, reports its steps in order and gets the hash tag', { timeout: 20 * 60_000 }, async () => {
    // The test rig (scripts/build-sandbox-image.sh) builds this same context with the same build
    // arguments and labels, so this build mostly hits Docker's cache: it proves the code path,
    // not the network. On a machine without that cache it is a full build (about 2 minutes here).
    assert.ok(exists(LOCAL_BASE_IMAGE), `${LOCAL_BASE_IMAGE} exists (scripts/build-sandbox-image.sh imports it)`);
    const steps: BuildStep[] = [];
    const lines: string[] = [];
    const started = Date.now();
    const result = await startBuild(options('sandbox', SANDBOX_IMAGE, steps, lines)).done;
    testLog.warn(`built ${SANDBOX_IMAGE} through the extension's build runner in ${Date.now() - started} ms`);
    assert.equal(result.status, 'built', lines.slice(-20).join('\n'));
    assert.ok(steps.length >= 10, `steps reported: ${steps.length}`);
    assert.deepEqual(steps.map((s) => s.step), steps.map((_, i) => i + 1), 'every step, in order, none skipped');
    assert.ok(steps.every((s) => s.total === steps.length));
    assert.equal(steps[1].instruction, 'FROM ${BASE_IMAGE}');
    assert.ok(steps.some((s) => /^RUN set -eux; rm -f \/etc\/apt\/sources\.list/.test(s.instruction)), 'the package step is reported');
    assert.ok(lines.some((l) => l.startsWith('Sending build context')), 'the full output reaches the log');
    assert.equal(result.status === 'built' && result.imageId, exists(SANDBOX_IMAGE), 'the hash tag names the image just built');
    assert.equal(label(SANDBOX_IMAGE, 'dev.botscreen.context'), SANDBOX_CONTEXT_HASH);
    assert.equal(label(SANDBOX_IMAGE, 'dev.botscreen.base'), LOCAL_BASE_IMAGE);
  });

  test('a build cancelled mid-step stops at once and leaves no image with its tag, nor its step container', { timeout: 120_000 }, async () => {
    const tag = throwaway('cancel');
    const marker = `cancel-${uniq}`;
    const steps: BuildStep[] = [];
    const lines: string[] = [];
    const handle = startBuild(options(tinyContext(`RUN sleep 45 && echo ${marker}`), tag, steps, lines));
    await waitFor(() => lines.some((l) => l.includes('Running in')) && steps.some((s) => s.instruction.startsWith('RUN sleep')), 60_000, 50, 'the RUN step to run');
    const cancelledAt = Date.now();
    handle.cancel();
    const result = await handle.done;
    const took = Date.now() - cancelledAt;
    assert.equal(result.status, 'cancelled');
    assert.ok(took < 15_000, `the build ended ${took} ms after cancel, long before its 45 s step`);
    assert.equal(exists(tag), '', 'no image carries the tag');
    // The engine abandons the build once its client is gone: the step's container goes too.
    await waitFor(() => !sh('docker', ['ps', '-a', '--no-trunc', '--format', '{{.Command}}']).includes(marker), 30_000, 50, 'the step container to go');
  });

  test('a failing build reports its last lines and tags nothing', { timeout: 120_000 }, async () => {
    const tag = throwaway('fail');
    const steps: BuildStep[] = [];
    const lines: string[] = [];
    const result = await startBuild(options(tinyContext(`RUN echo broken-${uniq} >&2; exit 3`), tag, steps, lines)).done;
    assert.equal(result.status, 'failed');
    assert.ok(result.status === 'failed' && result.exitCode !== 0);
    const last = result.status === 'failed' ? result.lastLines.join('\n') : '';
    assert.match(last, new RegExp(`broken-${uniq}`), 'the step\'s own output');
    assert.match(last, /returned a non-zero code: 3/, 'the engine\'s verdict');
    assert.deepEqual(steps.map((s) => s.step), [1, 2, 3]);
    assert.equal(exists(tag), '', 'no image carries the tag');
  });
});

describe('sandbox image build with podman', () => {
  const podmanExists = (image: string) => sh('podman', ['image', 'inspect', '--format', '{{.Id}}', '--', image]).trim();
  const tags = [throwaway('podman'), throwaway('podman-cancel')];

  after(() => {
    for (const tag of tags) {
      if (podmanExists(tag)) {
        sh('podman', ['image', 'rm', '--', tag]);
      }
    }
  });

  test('podman build through the same runner: steps in order, then the tag; a cancel tags nothing', { timeout: 300_000 }, async () => {
    // Podman keeps images in its own storage: the debootstrap base is loaded there once.
    if (!podmanExists(LOCAL_BASE_IMAGE)) {
      execFileSync('bash', ['-c', 'set -o pipefail; docker save "$1" | podman load -q', 'load', LOCAL_BASE_IMAGE], { stdio: 'ignore', timeout: 240_000 });
    }
    const steps: BuildStep[] = [];
    const lines: string[] = [];
    const result = await startBuild(options(tinyContext(`RUN echo podman-${uniq} >&2`), tags[0], steps, lines, 'podman')).done;
    assert.equal(result.status, 'built', lines.slice(-20).join('\n'));
    assert.deepEqual(steps.map((s) => `${s.step}/${s.total}`), ['1/4', '2/4', '3/4', '4/4'], 'FROM, RUN and the two labels');
    assert.ok(lines.includes(`podman-${uniq}`), 'the step\'s output reaches the log');
    assert.equal(podmanExists(tags[0]), result.status === 'built' ? result.imageId : '');

    const cancelSteps: BuildStep[] = [];
    const handle = startBuild(options(tinyContext(`RUN sleep 45 && echo cancel-${uniq}`), tags[1], cancelSteps, [], 'podman'));
    await waitFor(() => cancelSteps.some((s) => s.instruction.startsWith('RUN sleep')), 60_000, 50, 'the RUN step to start');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cancelledAt = Date.now();
    handle.cancel();
    assert.equal((await handle.done).status, 'cancelled');
    assert.ok(Date.now() - cancelledAt < 15_000, 'podman ended long before its 45 s step');
    assert.equal(podmanExists(tags[1]), '', 'no image carries the tag');
  });
});
