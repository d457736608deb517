// A running screen's sandbox watched through Docker's own events, for real: the real engine, the
// docker CLI behind a recording wrapper (every argv it is given lands in a log). While nothing
// happens no `docker inspect` runs at all; a `docker kill` is noticed within a few seconds with no
// relay open to break; the one `docker events` client per screen ends with the screen, and one
// that dies is replaced. First the watch alone on a plain container of the base image (no desktop
// to start), then the whole controller with the desktop image.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { Liveness } from '../../src/core/backends/backend';
import { DockerBackend } from '../../src/core/backends/docker';
import { SandboxBackends } from '../../src/core/backends/registry';
import { LivenessWatch } from '../../src/core/livenessWatch';
import { ScreenController } from '../../src/core/screen';
import { hostProcesses, LOCAL_BASE_IMAGE, removeTestContainers, settings, sh, tempMarkers, testLog, uniqueKey, waitFor } from '../support/env';
import { sleep } from '../support/process';

/** The docker CLI behind a wrapper that appends each call's argv (one line) to `log`. */
function recordingDocker(): { cli: string; log: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'botscreen-liveness-'));
  const log = join(dir, 'calls.log');
  const real = sh('sh', ['-c', 'command -v docker']).trim();
  assert.ok(real, 'docker is installed');
  const cli = join(dir, 'docker');
  writeFileSync(log, '');
  writeFileSync(cli, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(cli, 0o700);
  return { cli, log, dir };
}

const calls = (log: string): string[] => readFileSync(log, 'utf8').split('\n').filter(Boolean);
/** This machine's `docker events` clients watching one container. */
const eventClients = (id: string): string[] => hostProcesses(`docker events .*container=${id}`);

describe('the liveness watch on a plain container, through docker events', () => {
  const recorder = recordingDocker();
  const name = `botscreen-liveness-${uniqueKey()}`;
  const backend = new DockerBackend(settings({ docker: { cli: recorder.cli } }).docker!, uniqueKey(), testLog);
  const answers: Array<{ at: number; liveness: Liveness }> = [];

  after(() => {
    sh('docker', ['rm', '-f', name]);
    rmSync(recorder.dir, { recursive: true, force: true });
  });

  test('idle: no inspect; a kill is noticed within 3 s; a dead events client is replaced; dispose ends it', async () => {
    const id = sh('docker', ['run', '-d', '--init', '--name', name, LOCAL_BASE_IMAGE, 'sleep', 'infinity']).trim();
    assert.match(id, /^[0-9a-f]{64}$/);
    const sandbox = await backend.fromIdentity({ backend: 'docker', id, name });
    const watch = new LivenessWatch({
      check: async () => {
        const liveness = await backend.liveness(sandbox);
        answers.push({ at: Date.now(), liveness });
        return liveness;
      },
      events: (since) => backend.livenessEvents(sandbox, since),
      log: testLog,
    });
    try {
      const first = await waitFor(() => {
        const now = eventClients(id);
        return now.length === 1 ? now[0] : undefined;
      }, 20_000, 100, 'one docker events client');
      const before = calls(recorder.log).length;
      await sleep(10_000);
      const idle = calls(recorder.log).slice(before);
      console.log(`# CLI calls in 10 s of watching an idle container: ${idle.length} (${idle.join(' | ') || 'none'})`);
      assert.deepEqual(idle, [], 'no docker call at all (no inspect) while nothing happens');
      assert.equal(answers.length, 0, 'nothing asked');

      // The events client dies: the container is checked at once and a new client replays the gap.
      sh('kill', ['-9', first.split(' ')[0]]);
      await waitFor(() => answers.length === 1, 20_000, 20, 'the check when the stream ended');
      assert.equal(answers[0].liveness, 'alive');
      const second = await waitFor(() => {
        const now = eventClients(id);
        return now.length === 1 && now[0] !== first ? now[0] : undefined;
      }, 20_000, 100, 'a new events client');
      assert.match(second, /--since \d+s/);

      const killStart = Date.now();
      sh('docker', ['kill', id]);
      const killDone = Date.now();
      const gone = await waitFor(() => answers.find((a) => a.liveness === 'gone'), 20_000, 20, 'the kill to be noticed');
      const noticed = gone.at - killDone;
      console.log(`# docker kill found gone ${noticed} ms after it returned (${gone.at - killStart} ms after it began), through the new events client`);
      assert.ok(noticed <= 3_000, `a killed container is found gone within 3 s of the kill (took ${noticed} ms)`);
    } finally {
      watch.dispose();
    }
    await waitFor(() => eventClients(id).length === 0, 10_000, 100, 'dispose to end the events client');
  });
});

describe('sandbox liveness through docker events', () => {
  const recorder = recordingDocker();
  const config = settings({ docker: { cli: recorder.cli } });
  const controller = new ScreenController(new SandboxBackends(), () => config, testLog, tempMarkers());

  after(async () => {
    await controller.stop().catch(() => undefined);
    controller.dispose();
    removeTestContainers(config.workspaceKey);
    rmSync(recorder.dir, { recursive: true, force: true });
  });

  test('idle: no docker inspect runs, one events client listens; a docker kill is noticed within a few seconds', async () => {
    const status = await controller.start();
    const id = status.sandbox!.id;
    await waitFor(() => eventClients(id).length === 1, 10_000, 100, 'one docker events client for the screen');
    const before = calls(recorder.log).length;
    await sleep(10_000);
    const idle = calls(recorder.log).slice(before);
    console.log(`# CLI calls in 10 s of an idle screen: ${idle.length} (${idle.join(' | ') || 'none'})`);
    assert.deepEqual(idle.filter((argv) => argv.startsWith('inspect')), [], 'no docker inspect while nothing happens');
    assert.deepEqual(idle, [], 'no docker call at all while nothing happens');
    assert.equal(eventClients(id).length, 1, 'still exactly one events client');
    assert.equal(controller.status.state, 'running');

    const killedAt = Date.now();
    sh('docker', ['kill', id]);
    const killDone = Date.now();
    await waitFor(() => controller.status.state === 'gone', 10_000, 20, 'the screen to be found gone');
    const noticed = Date.now() - killDone;
    console.log(`# docker kill noticed ${noticed} ms after it returned (${Date.now() - killedAt} ms after it began), no relay open`);
    assert.ok(noticed <= 3_000, `a killed sandbox is noticed within 3 s through its events (took ${noticed} ms)`);
    assert.deepEqual(controller.status.problem, { code: 'sandboxGone' });
    await waitFor(() => eventClients(id).length === 0, 5_000, 100, 'the events client to end with the screen');
    const afterKill = calls(recorder.log).slice(before);
    assert.equal(afterKill.filter((argv) => argv.startsWith('inspect')).length, 1, `one inspect, asked by the event: ${afterKill.join(' | ')}`);
  });

  test('an events client that dies is replaced; Stop and dispose leave no events client running', async () => {
    removeTestContainers(config.workspaceKey);
    const status = await controller.start();
    const id = status.sandbox!.id;
    const first = await waitFor(() => {
      const now = eventClients(id);
      return now.length === 1 ? now[0] : undefined;
    }, 10_000, 100, 'the events client');
    const before = calls(recorder.log).length;
    sh('kill', ['-9', first.split(' ')[0]]);
    const second = await waitFor(() => {
      const now = eventClients(id);
      return now.length === 1 && now[0] !== first ? now[0] : undefined;
    }, 15_000, 100, 'a new events client');
    const between = calls(recorder.log).slice(before);
    console.log(`# after the events client died: ${between.join(' | ')}`);
    assert.ok(between.some((argv) => argv.startsWith('inspect')), 'the sandbox was checked when its stream ended');
    assert.match(second, /--since \d+s/, 'the new client replays what it may have missed');
    assert.equal(controller.status.state, 'running');

    // The new client works: a kill now is seen through it.
    sh('docker', ['kill', id]);
    const killDone = Date.now();
    await waitFor(() => controller.status.state === 'gone', 10_000, 20, 'the screen to be found gone');
    assert.ok(Date.now() - killDone <= 3_000, `noticed through the new client within 3 s (${Date.now() - killDone} ms)`);

    await controller.start();
    await waitFor(() => eventClients(id).length === 1, 10_000, 100, 'the events client of the started screen');
    await controller.stop();
    assert.deepEqual(eventClients(id), [], 'Stop ends the events client');
    await controller.start();
    await waitFor(() => eventClients(id).length === 1, 10_000, 100, 'the events client of the started screen');
    controller.dispose();
    assert.deepEqual(eventClients(id), [], 'dispose (window closing) ends the events client');
  });
});
