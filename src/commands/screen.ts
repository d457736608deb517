import * as vscode from 'vscode';
import { ScreenError } from '../core/problem';
import type { Ctx } from '../ctx';
import { problemMessage } from '../messages';
import { startScreen } from './image';
import { DEFAULT_IMAGE } from '../settings';
import { SCREEN_VIEW_ID } from '../screenViews';

/** The Debian packages that make the host able to run the screen (gateway placement). */
export const HOST_DESKTOP_PACKAGES = [
  'tigervnc-standalone-server', 'tigervnc-tools', 'xfwm4', 'xfce4-panel', 'xfdesktop4', 'xfce4-settings',
  'xfce4-terminal', 'dbus-x11', 'xauth', 'x11-utils', 'x11-xserver-utils', 'xdotool', 'python3', 'fonts-dejavu-core', 'procps',
];

export function registerScreenCommands(ctx: Ctx): void {
  ctx.registerCommand('botScreen.start', async () => {
    void vscode.commands.executeCommand(`${SCREEN_VIEW_ID}.focus`);
    await report(ctx, () => startScreen(ctx));
  });
  ctx.registerCommand('botScreen.stop', () => report(ctx, () => ctx.controller.stop()));
  ctx.registerCommand('botScreen.openInEditor', () => ctx.views.openInEditor());
  ctx.registerCommand('botScreen.showLogs', () => ctx.log.show(true));
  ctx.registerCommand('botScreen.installHostDesktop', () => installHostDesktop(ctx));
}

async function report(ctx: Ctx, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (err) {
    const message = err instanceof ScreenError ? problemMessage(err.problem) : String(err);
    if (err instanceof ScreenError && err.problem.code === 'needsConsent' && err.problem.declined) {
      // The person just said no in the modal: nothing to report back to them.
      ctx.log.info(message);
      return;
    }
    if (err instanceof ScreenError && err.problem.code === 'untrusted') {
      const manage = vscode.l10n.t('Manage Workspace Trust');
      if ((await vscode.window.showWarningMessage(message, manage)) === manage) {
        void vscode.commands.executeCommand('workbench.trust.manage');
      }
      return;
    }
    ctx.log.error(message);
    const showLogs = vscode.l10n.t('Show Logs');
    if ((await vscode.window.showErrorMessage(message, showLogs)) === showLogs) {
      ctx.log.show(true);
    }
  }
}

/**
 * Installs the desktop on this machine, in a terminal the user watches. Only for a screen
 * that belongs on this machine: a sandbox gets the desktop image instead.
 */
function installHostDesktop(ctx: Ctx): void {
  const placement = ctx.controller.placement();
  if (placement?.where !== 'host') {
    void vscode.window.showErrorMessage(
      vscode.l10n.t('The screen lives inside the sandbox, not on this machine: give the sandbox the desktop image {0} ("botScreen.sandbox.docker.image") instead of installing a desktop here.', DEFAULT_IMAGE),
    );
    return;
  }
  const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
  const terminal = vscode.window.createTerminal({ name: vscode.l10n.t('Bot Screen: install desktop') });
  terminal.show();
  terminal.sendText(`${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends ${HOST_DESKTOP_PACKAGES.join(' ')}`);
}

/**
 * The running screen for a command that acts on it: started first (through the Start command,
 * so errors are reported the same way) when it is not running. Undefined when it could not start.
 */
export async function runningScreen(ctx: Ctx) {
  if (ctx.controller.status.state !== 'running') {
    await vscode.commands.executeCommand('botScreen.start');
  }
  return ctx.controller.runningSandbox();
}
