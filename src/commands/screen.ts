/**
 * The screen's own commands: Start, Stop, Open in Editor, Show Logs, Install Desktop on this
 * machine, and the Screen view's fix buttons.
 */
import * as vscode from 'vscode';
import { makesSandboxFromImage } from '../core/backends/registry';
import { backendSetting } from '../core/problem';
import type { Ctx } from '../ctx';
import { hostPlace } from '../messages';
import { fixesFor } from '../fixes';
import { applyFix, report } from '../problemUi';
import { APPLY_FIX_COMMAND } from '../screenWebview';
import { startScreen } from './image';
import { DEFAULT_IMAGE } from '../settings';
import { SCREEN_VIEW_ID } from '../screenViews';
import type { Command } from './table';

/** The Debian packages that make the host able to run the screen (gateway placement). */
export const HOST_DESKTOP_PACKAGES = [
  'tigervnc-standalone-server', 'tigervnc-tools', 'xfwm4', 'xfce4-panel', 'xfdesktop4', 'xfce4-settings',
  'xfce4-terminal', 'dbus-x11', 'xauth', 'x11-utils', 'x11-xserver-utils', 'xdotool', 'python3', 'fonts-dejavu-core', 'procps',
];

export function screenCommands(ctx: Ctx): Command[] {
  return [
    {
      id: 'botScreen.start',
      run: async () => {
        void vscode.commands.executeCommand(`${SCREEN_VIEW_ID}.focus`);
        await report(ctx, () => startScreen(ctx), 'botScreen.start');
      },
    },
    { id: 'botScreen.stop', run: () => report(ctx, () => ctx.controller.stop(), 'botScreen.stop') },
    { id: 'botScreen.openInEditor', run: () => ctx.views.openInEditor() },
    { id: 'botScreen.showLogs', run: () => ctx.log.show(true) },
    { id: 'botScreen.installHostDesktop', run: () => installHostDesktop(ctx) },
    // The Screen view's fix buttons: the fix of that kind for the problem the view shows now.
    { id: APPLY_FIX_COMMAND, run: (kind) => applyViewFix(ctx, kind) },
  ];
}

async function applyViewFix(ctx: Ctx, kind: unknown): Promise<void> {
  const problem = ctx.controller.status.problem;
  const fix = problem ? fixesFor(problem).find((candidate) => candidate.kind === kind) : undefined;
  if (fix) {
    await applyFix({ log: ctx.log, manifest: ctx.extension.extension.packageJSON }, fix);
  }
}

/**
 * Installs the desktop on this machine, in a terminal the user watches. Only for a screen
 * that belongs on this machine: a sandbox gets the desktop image instead.
 */
function installHostDesktop(ctx: Ctx): void {
  const placement = ctx.controller.placement();
  if (placement?.where !== 'host') {
    const backend = placement?.backend ?? 'docker';
    void vscode.window.showErrorMessage(
      makesSandboxFromImage(backend)
        ? vscode.l10n.t('The screen lives inside the sandbox, not {0}: give the sandbox the desktop image {1} ("{2}") instead of installing a desktop here.', hostPlace(), DEFAULT_IMAGE, backendSetting(backend, 'image'))
        : vscode.l10n.t('The screen lives inside the sandbox, not {0}: install the desktop (TigerVNC, Xfce, python3) in the sandbox instead.', hostPlace()),
    );
    return;
  }
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  const terminal = vscode.window.createTerminal({ name: vscode.l10n.t('Bot Screen: install desktop') });
  terminal.show();
  terminal.sendText(`${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends ${HOST_DESKTOP_PACKAGES.join(' ')}`);
}
