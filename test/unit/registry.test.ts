// The backend registry: each backend's settings are read through its record exactly as the
// extension reads them (user-only keys from the user's settings alone), and the factory keeps one
// instance per backend while its settings stay the same.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SettingsSource } from '../../src/core/backends/backend';
import { HostBackend } from '../../src/core/backends/host';
import { BACKEND_USER_ONLY_SETTINGS, readBackendSettings, SandboxBackends } from '../../src/core/backends/registry';
import { SANDBOX_IMAGE } from '../../src/core/sandboxImage';
import { settings, testLog } from '../support/env';

/** Settings as VS Code would give them: `workspace` values win in `get`, never in `user`. */
function source(user: Record<string, unknown>, workspace: Record<string, unknown> = {}): SettingsSource {
  return {
    get: <T>(key: string) => (key in workspace ? workspace[key] : user[key]) as T | undefined,
    user: <T>(key: string) => user[key] as T | undefined,
    pinned: (key) => key in user && !(key in workspace),
    fromWorkspace: (key) => key in workspace && workspace[key] !== user[key],
  };
}

describe('backend settings read through the registry', () => {
  test('defaults: each engine its own CLI, the built image, no container, 2048 pids', () => {
    const read = readBackendSettings(source({}));
    assert.deepEqual(read.docker, { cli: 'docker', image: SANDBOX_IMAGE, imagePinned: false, imageFromWorkspace: false, container: '', pidsLimit: 2048 });
    assert.deepEqual(read.podman, { cli: 'podman', image: SANDBOX_IMAGE, imagePinned: false, imageFromWorkspace: false, container: '', pidsLimit: 2048 });
    assert.deepEqual(read.ssh, { host: '', user: '', port: undefined, identityFile: '', path: 'ssh', hostFromWorkspace: false });
    assert.deepEqual(read.apptainer, { path: 'apptainer', image: '', instance: '' });
    assert.deepEqual(read.kubernetes, { path: 'kubectl', context: '', namespace: '', pod: '', container: '' });
  });

  test('a program to run is taken from the user settings only; a workspace value of it is ignored', () => {
    const workspace = { 'sandbox.docker.path': '/tmp/evil', 'sandbox.podman.path': '/tmp/evil', 'sandbox.ssh.path': '/tmp/evil', 'sandbox.ssh.identityFile': '/tmp/key', 'sandbox.apptainer.path': '/tmp/evil', 'sandbox.kubernetes.path': '/tmp/evil' };
    const read = readBackendSettings(source({ 'sandbox.docker.path': ' /usr/bin/docker ' }, workspace));
    assert.equal(read.docker.cli, '/usr/bin/docker');
    assert.equal(read.podman.cli, 'podman');
    assert.equal(read.ssh.path, 'ssh');
    assert.equal(read.ssh.identityFile, '');
    assert.equal(read.apptainer.path, 'apptainer');
    assert.equal(read.kubernetes.path, 'kubectl');
    assert.deepEqual([...BACKEND_USER_ONLY_SETTINGS].sort(), Object.keys(workspace).sort(), 'every such key is declared user-only');
  });

  test("Podman has no pids setting of its own: the one limit (docker's) applies to every container Bot Screen creates", () => {
    assert.equal(readBackendSettings(source({ 'sandbox.docker.pidsLimit': 4096 })).podman.pidsLimit, 4096);
    assert.equal(readBackendSettings(source({ 'sandbox.docker.pidsLimit': 10 })).podman.pidsLimit, 2048, 'below 64 is not a limit a desktop survives');
  });

  test("a workspace's image is marked as the workspace's (a replacement asks); a user's pins it", () => {
    const fromWorkspace = readBackendSettings(source({}, { 'sandbox.podman.image': 'team:1' })).podman;
    assert.deepEqual([fromWorkspace.image, fromWorkspace.imagePinned, fromWorkspace.imageFromWorkspace], ['team:1', false, true]);
    const pinned = readBackendSettings(source({ 'sandbox.docker.image': 'mine:2' })).docker;
    assert.deepEqual([pinned.image, pinned.imagePinned, pinned.imageFromWorkspace], ['mine:2', true, false]);
  });

  test('an SSH destination any part of which the workspace chose needs approval; an unset port is ssh\'s own', () => {
    assert.equal(readBackendSettings(source({ 'sandbox.ssh.host': 'a' }, { 'sandbox.ssh.port': 2222 })).ssh.hostFromWorkspace, true);
    assert.equal(readBackendSettings(source({ 'sandbox.ssh.port': null })).ssh.port, undefined);
  });
});

describe('the backend factory', () => {
  test('one instance per backend while its settings stay the same; a change makes a new one', () => {
    const backends = new SandboxBackends();
    const config = settings();
    const placement = { where: 'sandbox', backend: 'docker' } as const;
    const first = backends.backendFor(placement, config, testLog);
    assert.ok(first);
    assert.equal(backends.backendFor(placement, { ...config }, testLog), first);
    assert.notEqual(backends.backendFor(placement, { ...config, docker: { ...config.docker, image: 'other:1' } }, testLog), first);
  });

  test('a refused placement has no backend; a screen on this machine gets the host backend', () => {
    const backends = new SandboxBackends();
    assert.equal(backends.backendFor({ where: 'refused', backend: 'modal' }, settings(), testLog), undefined);
    assert.ok(backends.backendFor({ where: 'host', backend: 'local', why: 'localBackend' }, settings(), testLog) instanceof HostBackend);
  });
});
