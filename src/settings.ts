import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import type { Logger } from './core/logger';
import { parseBackend, parsePlacementSetting } from './core/placement';
import type { ScreenSettings } from './core/screen';

/** The one place that names the default desktop image. */
export const DEFAULT_IMAGE = 'botscreen/sandbox:desktop';
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
      image: String(config.get('sandbox.docker.image') || DEFAULT_IMAGE).trim(),
      container: String(config.get('sandbox.docker.container') ?? '').trim(),
      pidsLimit: Number.isInteger(pidsLimit) && pidsLimit >= 64 ? pidsLimit : DEFAULT_PIDS_LIMIT,
    },
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
