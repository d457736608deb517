import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MarkerStore } from '../../src/core/marker';
import type { Logger } from '../../src/core/logger';
import { SANDBOX_IMAGE } from '../../src/core/sandboxImage';
import type { ScreenSettings } from '../../src/core/settings';

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

/** Runs a command for a check; returns stdout ('' on a non-zero exit). */
export function sh(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? '');
  }
}

/** Desktop processes of a container, by name (`pgrep -a` lines). */
export function desktopProcesses(containerId: string): string[] {
  return sh('docker', ['exec', containerId, 'pgrep', '-a', '-f', 'Xvnc|xfwm4|xfce4-panel|xfdesktop|xfsettingsd|dbus-daemon|launcher.sh'])
    .split('\n')
    .filter(Boolean);
}

/**
 * Processes of this machine itself whose command line matches. pgrep also sees every container's
 * processes (one kernel); only those in our own pid namespace run on the host.
 */
export function hostProcesses(pattern: string): string[] {
  const ours = readlinkSync('/proc/self/ns/pid');
  return sh('pgrep', ['-a', '-f', pattern])
    .split('\n')
    .filter(Boolean)
    .filter((line) => {
      try {
        return readlinkSync(`/proc/${line.split(' ')[0]}/ns/pid`) === ours;
      } catch {
        return false; // already gone
      }
    });
}

export function removeTestContainers(workspaceKey: string): void {
  const ids = sh('docker', ['ps', '-aq', '--filter', `label=dev.botscreen.workspace=${workspaceKey}`]).split('\n').filter(Boolean);
  if (ids.length > 0) {
    sh('docker', ['rm', '-f', ...ids]);
  }
}

export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!(await predicate())) {
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

/** A marker store in a fresh temporary directory (the extension uses its global storage). */
export function tempMarkers(): MarkerStore {
  return new MarkerStore(mkdtempSync(join(tmpdir(), 'botscreen-markers-')));
}
