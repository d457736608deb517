import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MarkerStore } from '../../src/core/marker';
import { RecorderProcess, type RecorderInit } from '../../src/core/recorderProcess';
import { RelayMux } from '../../src/core/relayMux';
import { openStream, type StreamProcess } from '../../src/core/runner';
import type { ScreenController } from '../../src/core/screen';
import type { Logger } from '../../src/core/logger';
import { SANDBOX_IMAGE } from '../../src/core/sandboxImage';
import type { ScreenSettings } from '../../src/core/settings';
import { sh } from './process';

// The process helpers every test uses, for the tests that import them from here.
export { hostProcesses, sh, waitFor } from './process';

/** The built recorder process (every test bundle sits three folders below the project). */
export const RECORDER_SCRIPT = join(__dirname, '..', '..', '..', 'dist', 'recorder.js');

/** The recorder as the extension runs it (src/recording.ts): its own process, on the controller's screen. */
export function recorderProcess(
  controller: ScreenController,
  init: Omit<RecorderInit, 'command' | 'watched'>,
  watched = false,
): RecorderProcess {
  const relay = controller.relayCommand({ mux: true });
  return new RecorderProcess(
    { script: RECORDER_SCRIPT, log: testLog, relayExited: relay.exited, unreachable: () => controller.relayUnreachable() },
    { ...init, command: relay.command, watched },
  );
}

/**
 * The recorder's relay opener for a recorder in the test's own process: each relay a connection
 * over one mux exec to the controller's screen, which ends with its last connection.
 */
export function recorderRelays(controller: ScreenController): () => StreamProcess {
  const mux = new RelayMux(() => openStream(controller.relayCommand({ mux: true }).command));
  return () => mux.connect();
}

/** The image the extension uses by default (the content-hash tag scripts/build-sandbox-image.sh also gives the rig's build). */
export const IMAGE = process.env.BOTSCREEN_IMAGE ?? SANDBOX_IMAGE;
/** The build base on this machine (no registry): the debootstrap image scripts/build-sandbox-image.sh imports. */
export const LOCAL_BASE_IMAGE = process.env.BOTSCREEN_BASE_IMAGE ?? 'local/bookworm:minbase';

export const testLog: Logger = {
  debug: (m) => process.env.BOTSCREEN_TEST_DEBUG && console.log(`[debug] ${m}`),
  info: (m) => process.env.BOTSCREEN_TEST_DEBUG && console.log(`[info] ${m}`),
  warn: (m) => console.log(`[warn] ${m}`),
  error: (m) => console.log(`[error] ${m}`),
};

export function uniqueKey(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

type Nested = 'docker' | 'podman' | 'ssh' | 'apptainer' | 'kubernetes';

export function settings(
  overrides: Partial<Omit<ScreenSettings, Nested>> & { [K in Nested]?: Partial<NonNullable<ScreenSettings[K]>> } = {},
): ScreenSettings {
  const { docker, podman, ssh, apptainer, kubernetes, ...rest } = overrides;
  return {
    placement: 'auto',
    backend: 'docker',
    backendRaw: 'docker',
    geometry: '1280x800',
    workspaceKey: uniqueKey(),
    idleStopMinutes: 0,
    ...rest,
    docker: { cli: 'docker', image: IMAGE, container: '', pidsLimit: 2048, imagePinned: false, ...docker },
    podman: { cli: 'podman', image: IMAGE, container: '', pidsLimit: 2048, imagePinned: false, ...podman },
    ssh: { host: '', user: '', port: undefined, identityFile: '', path: 'ssh', ...ssh },
    apptainer: { path: 'apptainer', image: '', instance: '', ...apptainer },
    kubernetes: { path: 'kubectl', context: '', namespace: '', pod: '', container: '', ...kubernetes },
  };
}

/** Desktop processes of a container, by name (`pgrep -a` lines). */
export function desktopProcesses(containerId: string): string[] {
  return sh('docker', ['exec', containerId, 'pgrep', '-a', '-f', 'Xvnc|xfwm4|xfce4-panel|xfdesktop|xfsettingsd|dbus-daemon|launcher.sh'])
    .split('\n')
    .filter(Boolean);
}

export function removeTestContainers(workspaceKey: string): void {
  const ids = sh('docker', ['ps', '-aq', '--filter', `label=dev.botscreen.workspace=${workspaceKey}`]).split('\n').filter(Boolean);
  if (ids.length > 0) {
    sh('docker', ['rm', '-f', ...ids]);
  }
}

/** A marker store in a fresh temporary directory (the extension uses its global storage). */
export function tempMarkers(): MarkerStore {
  return new MarkerStore(mkdtempSync(join(tmpdir(), 'botscreen-markers-')));
}
