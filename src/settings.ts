/**
 * The extension's reading of its settings (VS Code's configuration): the snapshot core acts on,
 * each backend's part read through its record, the user-only rule, and the image settings' upkeep.
 */
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as vscode from 'vscode';
import type { Logger } from './core/logger';
import type { SettingsSource } from './core/backends/backend';
import { BACKEND_USER_ONLY_SETTINGS, readBackendSettings } from './core/backends/registry';
import { parseBackend, parsePlacementSetting } from './core/placement';
import {
  DEFAULT_BASE_IMAGE, DEFAULT_DEBIAN_MIRROR, DEFAULT_DEBIAN_SECURITY_MIRROR, SANDBOX_IMAGE,
} from './core/sandboxImage';
import type { ScreenSettings } from './core/settings';
import { workspaceKeyOf } from './core/workspaceKey';

/**
 * The default desktop image: the local tag of the image Bot Screen builds from the context in
 * its VSIX (src/core/sandboxImage.ts), never a registry name.
 */
export const DEFAULT_IMAGE = SANDBOX_IMAGE;
/** Earlier defaults: a setting still holding one of these follows the new default instead. */
export const RETIRED_DEFAULT_IMAGES: readonly string[] = ['botscreen/sandbox:desktop', 'botscreen/sandbox:bookworm', 'botscreen/desktop:latest'];
const IMAGE_SETTING = 'sandbox.docker.image';
export const DEFAULT_GEOMETRY = '1280x800';

const warned = new Set<string>();

/**
 * Settings that pick a program to run on this machine, or move the screen onto it: read from the
 * user settings only (in a remote window, the user's and the remote machine's). A workspace
 * settings file can be written by a cloned repository or by the agent itself, so its values of
 * these are ignored, and the user is told (ignoredWorkspaceSettings).
 */
const CHOICE_SETTINGS = ['placement', 'sandbox.backend', 'autoStart'] as const;
// What the image build runs FROM and installs from.
const IMAGE_BUILD_SETTINGS = ['sandbox.image.base', 'sandbox.image.debianMirror', 'sandbox.image.debianSecurityMirror'] as const;
// What of the user's machine the screen may reach: the clipboard (src/clipboard.ts). The agent can
// write the workspace settings, so a workspace value could hand it the user's clipboard.
const SHARING_SETTINGS = ['clipboard'] as const;
// What this machine listens on: the direct channel's loopback listener (src/directEndpoint.ts).
const LISTENER_SETTINGS = ['viewer.directChannel'] as const;
// What is written to this machine's disk (src/recording.ts): the agent must not turn its own
// recording off, nor fill the disk.
const RECORDER_SETTINGS = ['recorder.enabled', 'recorder.maxMB'] as const;
/** Each backend's own (its CLI, its key file) come from its record. */
export const USER_ONLY_SETTINGS: readonly string[] = [
  ...CHOICE_SETTINGS, ...BACKEND_USER_ONLY_SETTINGS, ...IMAGE_BUILD_SETTINGS, ...SHARING_SETTINGS, ...LISTENER_SETTINGS, ...RECORDER_SETTINGS,
];
export type UserOnlySetting =
  | (typeof CHOICE_SETTINGS)[number]
  | (typeof IMAGE_BUILD_SETTINGS)[number]
  | (typeof SHARING_SETTINGS)[number]
  | (typeof LISTENER_SETTINGS)[number]
  | (typeof RECORDER_SETTINGS)[number];

/** The user's value of a user-only setting (else its default); the workspace's never counts. */
export function userSetting<T>(key: UserOnlySetting): T | undefined {
  return userValue(vscode.workspace.getConfiguration('botScreen'), key);
}

function userValue<T>(config: vscode.WorkspaceConfiguration, key: string): T | undefined {
  const scopes = config.inspect<T>(key);
  return scopes?.globalValue ?? scopes?.defaultValue;
}

/** A workspace value of a user-only setting that differs from the one used, and where it is written. */
export interface IgnoredSetting {
  /** The full id, `botScreen.sandbox.docker.path`. */
  readonly id: string;
  readonly file: string;
}

export function ignoredWorkspaceSettings(): IgnoredSetting[] {
  const config = vscode.workspace.getConfiguration('botScreen');
  const ignored: IgnoredSetting[] = [];
  for (const key of USER_ONLY_SETTINGS) {
    const scopes = config.inspect(key);
    const used = scopes?.globalValue ?? scopes?.defaultValue;
    if (scopes?.workspaceValue !== undefined && !isDeepStrictEqual(scopes.workspaceValue, used)) {
      ignored.push({ id: `botScreen.${key}`, file: workspaceSettingsFile() });
    }
  }
  return ignored;
}

/** The file that holds this window's workspace settings (a .code-workspace, or the folder's). */
function workspaceSettingsFile(): string {
  const file = vscode.workspace.workspaceFile;
  if (file && file.scheme !== 'untitled') {
    return file.fsPath;
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return folder ? path.join(folder, '.vscode', 'settings.json') : 'settings.json';
}

/**
 * Whether a sandbox-naming value (an image, an SSH host) is the workspace's own choice: a
 * workspace value that differs from the user's. Such a value may name a sandbox, but replacing a
 * container or going to a new host for it asks first.
 */
function fromWorkspace(config: vscode.WorkspaceConfiguration, key: string): boolean {
  const scopes = config.inspect<unknown>(key);
  const workspace = scopes?.workspaceValue ?? scopes?.workspaceFolderValue;
  return workspace !== undefined && !isDeepStrictEqual(workspace, scopes?.globalValue);
}

/** Reads the settings for one action. Unknown values are reported once in the log. */
export function readSettings(log: Logger): ScreenSettings {
  const config = vscode.workspace.getConfiguration('botScreen');
  const placement = parsePlacementSetting(userSetting('placement'));
  if (placement.unknown !== undefined) {
    warnOnce(log, `botScreen.placement "${placement.unknown}" is not auto, terminal or gateway; using auto`);
  }
  const backendRaw = String(userSetting('sandbox.backend') ?? 'docker');
  const backend = parseBackend(backendRaw);
  if (backend.unknown !== undefined) {
    warnOnce(log, `botScreen.sandbox.backend "${backend.unknown}" is not a known backend; the screen is refused`);
  }
  const source: SettingsSource = {
    get: (key) => config.get(key),
    user: (key) => userValue(config, key),
    pinned: (key) => isPinned(config, key),
    fromWorkspace: (key) => fromWorkspace(config, key),
  };
  return {
    placement: placement.value,
    backend: backend.value,
    backendRaw,
    geometry: String(config.get('screen.geometry') ?? DEFAULT_GEOMETRY).trim(),
    ...readBackendSettings(source),
    idleStopMinutes: Math.max(0, Number(config.get('idleStopMinutes') ?? 30) || 0),
    workspaceKey: workspaceKey(),
  };
}

/** A short stable key for this window's workspace: names its container and runtime dir. */
export function workspaceKey(): string {
  const identity = vscode.workspace.workspaceFile?.toString() ?? vscode.workspace.workspaceFolders?.[0]?.uri.toString() ?? 'no-workspace';
  return workspaceKeyOf(identity);
}

function warnOnce(log: Logger, message: string): void {
  if (!warned.has(message)) {
    warned.add(message);
    log.warn(message);
  }
}

/**
 * Pinned means written by the user in the user settings, even to the default value: a value
 * comparison could not tell "chose the default on purpose" from "never chose". A pinned image
 * replaces our container without a question, so a workspace value never pins (it asks instead).
 */
function isPinned(config: vscode.WorkspaceConfiguration, setting: string): boolean {
  return config.inspect<string>(setting)?.globalValue !== undefined && !fromWorkspace(config, setting);
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
  return {
    base: userStr('sandbox.image.base') || DEFAULT_BASE_IMAGE,
    debianMirror: userStr('sandbox.image.debianMirror') || DEFAULT_DEBIAN_MIRROR,
    debianSecurityMirror: userStr('sandbox.image.debianSecurityMirror') || DEFAULT_DEBIAN_SECURITY_MIRROR,
  };
}

/** The container engine the image commands use: Podman's CLI for the podman backend, else Docker's. */
export function engineOf(settings: ScreenSettings): { readonly cli: string; readonly engine: 'docker' | 'podman' } {
  return settings.backend === 'podman' ? { cli: settings.podman.cli, engine: 'podman' } : { cli: settings.docker.cli, engine: 'docker' };
}

function userStr(key: UserOnlySetting): string {
  return String(userSetting(key) ?? '').trim();
}
