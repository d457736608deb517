import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import type { Logger } from './core/logger';
import { parseBackend, parsePlacementSetting } from './core/placement';
import {
  DEFAULT_BASE_IMAGE, DEFAULT_DEBIAN_MIRROR, DEFAULT_DEBIAN_SECURITY_MIRROR, SANDBOX_IMAGE,
} from './core/sandboxImage';
import type { ScreenSettings } from './core/screen';

/**
 * The default desktop image: the local tag of the image Bot Screen builds from the context in
 * its VSIX (src/core/sandboxImage.ts), never a registry name.
 */
export const DEFAULT_IMAGE = SANDBOX_IMAGE;
/** Earlier defaults: a setting still holding one of these follows the new default instead. */
export const RETIRED_DEFAULT_IMAGES: readonly string[] = ['botscreen/sandbox:desktop', 'botscreen/sandbox:bookworm', 'botscreen/desktop:latest'];
const IMAGE_SETTING = 'sandbox.docker.image';
export const DEFAULT_GEOMETRY = '1280x800';
export const DEFAULT_PIDS_LIMIT = 2048;

const warned = new Set<string>();

/** Reads the settings for one action. Unknown values are reported once in the log. */
export function readSettings(log: Logger): ScreenSettings {
  const config = vscode.workspace.getConfiguration('botScreen');
  const placement = parsePlacementSetting(config.get('placement'));
  if (placement.unknown !== undefined) {
    warnOnce(log, `botScreen.placement "${placement.unknown}" is not auto, terminal or gateway; using auto`);
  }
  const backendRaw = String(config.get('sandbox.backend') ?? 'docker');
  const backend = parseBackend(backendRaw);
  if (backend.unknown !== undefined) {
    warnOnce(log, `botScreen.sandbox.backend "${backend.unknown}" is not a known backend; the screen is refused`);
  }
  const pidsLimit = Number(config.get('sandbox.docker.pidsLimit'));
  return {
    placement: placement.value,
    backend: backend.value,
    backendRaw,
    geometry: String(config.get('screen.geometry') ?? DEFAULT_GEOMETRY).trim(),
    docker: {
      cli: String(config.get('sandbox.docker.path') || 'docker'),
      image: String(config.get(IMAGE_SETTING) || DEFAULT_IMAGE).trim(),
      imagePinned: isPinned(config, IMAGE_SETTING),
      container: String(config.get('sandbox.docker.container') ?? '').trim(),
      pidsLimit: Number.isInteger(pidsLimit) && pidsLimit >= 64 ? pidsLimit : DEFAULT_PIDS_LIMIT,
    },
    podman: {
      cli: str(config, 'sandbox.podman.path') || 'podman',
      image: str(config, 'sandbox.podman.image') || DEFAULT_IMAGE,
      container: str(config, 'sandbox.podman.container'),
      pidsLimit: Number.isInteger(pidsLimit) && pidsLimit >= 64 ? pidsLimit : DEFAULT_PIDS_LIMIT,
      imagePinned: isPinned(config, 'sandbox.podman.image'),
    },
    ssh: {
      host: str(config, 'sandbox.ssh.host'),
      user: str(config, 'sandbox.ssh.user'),
      port: config.get<number | null>('sandbox.ssh.port') ?? undefined,
      identityFile: str(config, 'sandbox.ssh.identityFile'),
      path: str(config, 'sandbox.ssh.path') || 'ssh',
    },
    apptainer: {
      path: str(config, 'sandbox.apptainer.path') || 'apptainer',
      image: str(config, 'sandbox.apptainer.image'),
      instance: str(config, 'sandbox.apptainer.instance'),
    },
    kubernetes: {
      path: str(config, 'sandbox.kubernetes.path') || 'kubectl',
      context: str(config, 'sandbox.kubernetes.context'),
      namespace: str(config, 'sandbox.kubernetes.namespace'),
      pod: str(config, 'sandbox.kubernetes.pod'),
      container: str(config, 'sandbox.kubernetes.container'),
    },
    idleStopMinutes: Math.max(0, Number(config.get('idleStopMinutes') ?? 30) || 0),
    workspaceKey: workspaceKey(),
  };
}

/** A short stable key for this window's workspace: names its container and runtime dir. */
export function workspaceKey(): string {
  const identity = vscode.workspace.workspaceFile?.toString() ?? vscode.workspace.workspaceFolders?.[0]?.uri.toString() ?? 'no-workspace';
  return createHash('sha256').update(identity).digest('hex').slice(0, 12);
}

function warnOnce(log: Logger, message: string): void {
  if (!warned.has(message)) {
    warned.add(message);
    log.warn(message);
  }
}

/**
 * Pinned means written by the user in any scope, even to the default value: a value comparison
 * could not tell "chose the default on purpose" from "never chose".
 */
function isPinned(config: vscode.WorkspaceConfiguration, setting: string): boolean {
  const scopes = config.inspect<string>(setting);
  return [scopes?.globalValue, scopes?.workspaceValue, scopes?.workspaceFolderValue].some((value) => value !== undefined);
}

/** Pins the image in the user's settings (Switch pins the target, Keep pins the current one). */
export async function pinImage(image: string): Promise<void> {
  await vscode.workspace.getConfiguration('botScreen').update(IMAGE_SETTING, image, vscode.ConfigurationTarget.Global);
}

/**
 * A saved image equal to a retired default is unset (not rewritten), so it follows the new
 * default and reaches the Switch/Keep question. A user's own image is never touched.
 */
export async function migrateRetiredImage(log: Logger): Promise<void> {
  const config = vscode.workspace.getConfiguration('botScreen');
  const scopes = config.inspect<string>(IMAGE_SETTING);
  const targets: Array<[string | undefined, vscode.ConfigurationTarget]> = [
    [scopes?.globalValue, vscode.ConfigurationTarget.Global],
    [scopes?.workspaceValue, vscode.ConfigurationTarget.Workspace],
    [scopes?.workspaceFolderValue, vscode.ConfigurationTarget.WorkspaceFolder],
  ];
  for (const [value, target] of targets) {
    if (value !== undefined && RETIRED_DEFAULT_IMAGES.includes(value.trim())) {
      log.info(`botScreen.sandbox.docker.image ${value} was a default that is retired; unsetting it to follow ${DEFAULT_IMAGE}`);
      await config.update(IMAGE_SETTING, undefined, target);
    }
  }
}

export interface ImageBuildSettings {
  readonly base: string;
  readonly debianMirror: string;
  readonly debianSecurityMirror: string;
}

/**
 * What the image build uses. These decide what runs on this machine, so only the user's own
 * (user or remote machine) settings count, never a workspace's.
 */
export function readImageBuildSettings(): ImageBuildSettings {
  const config = vscode.workspace.getConfiguration('botScreen');
  const user = (key: string, fallback: string) => String(config.inspect<string>(key)?.globalValue ?? '').trim() || fallback;
  return {
    base: user('sandbox.image.base', DEFAULT_BASE_IMAGE),
    debianMirror: user('sandbox.image.debianMirror', DEFAULT_DEBIAN_MIRROR),
    debianSecurityMirror: user('sandbox.image.debianSecurityMirror', DEFAULT_DEBIAN_SECURITY_MIRROR),
  };
}

function str(config: vscode.WorkspaceConfiguration, key: string): string {
  return String(config.get(key) ?? '').trim();
}
