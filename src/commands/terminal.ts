import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import type { ScreenStatus } from '../core/screen';
import { runningScreen } from './screen';

const SESSION_KEYS = ['DISPLAY', 'XAUTHORITY', 'DBUS_SESSION_BUS_ADDRESS'] as const;

/**
 * "Open Sandbox Terminal": a shell inside the screen's sandbox with its DISPLAY, so GUI programs
 * started there appear on the screen. On this machine (gateway), every new integrated terminal
 * gets the screen's DISPLAY through the extension's environment variable collection instead.
 */
export function registerTerminalCommands(ctx: Ctx): void {
  ctx.registerCommand('botScreen.openSandboxTerminal', async () => {
    const running = await runningScreen(ctx);
    if (!running) {
      return;
    }
    const env = sessionEnv(running.screen.env);
    const shell = running.sandbox.terminal?.(env);
    if (!shell) {
      void vscode.window.showErrorMessage(vscode.l10n.t('The {0} backend cannot open an interactive terminal.', running.sandbox.backend));
      return;
    }
    const terminal = vscode.window.createTerminal({
      name: vscode.l10n.t('Bot Screen: {0}', running.sandbox.onHost ? vscode.l10n.t('this machine') : running.sandbox.name),
      shellPath: shell.command,
      shellArgs: [...shell.args],
      iconPath: new vscode.ThemeIcon('vm'),
    });
    terminal.show();
  });
  const collection = ctx.extension.environmentVariableCollection;
  collection.description = vscode.l10n.t('DISPLAY of the Bot Screen on this machine');
  const apply = (status: ScreenStatus) => {
    collection.clear();
    if (status.state === 'running' && status.sandbox?.onHost && status.screen) {
      for (const [key, value] of Object.entries(sessionEnv(status.screen.env))) {
        collection.replace(key, value);
      }
    }
  };
  ctx.own(ctx.controller.onStatus(apply));
  apply(ctx.controller.status);
}

function sessionEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(SESSION_KEYS.filter((key) => env[key]).map((key) => [key, env[key]]));
}
