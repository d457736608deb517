/** The sandbox terminal: a command, a terminal profile, and DISPLAY for terminals on this machine. */
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import type { ScreenStatus } from '../core/screen';
import { hostShortName } from '../messages';
import { runningScreen, type Command, type RunningScreen } from './table';

const SESSION_KEYS = ['DISPLAY', 'XAUTHORITY', 'DBUS_SESSION_BUS_ADDRESS'] as const;

/** The terminal profile in the terminal's `+` menu (`contributes.terminal.profiles`). */
const TERMINAL_PROFILE_ID = 'botScreen.sandbox';

/**
 * "Open Sandbox Terminal" and the "Bot Screen sandbox" terminal profile: a shell inside the
 * screen's sandbox with its DISPLAY, so GUI programs started there appear on the screen. On this
 * machine (gateway), every new integrated terminal gets the screen's DISPLAY through the
 * extension's environment variable collection instead.
 */
export function terminalCommands(ctx: Ctx): Command[] {
  ctx.register(
    vscode.window.registerTerminalProfileProvider(TERMINAL_PROFILE_ID, {
      provideTerminalProfile: async () => {
        const running = await runningScreen(ctx);
        const options = running && sandboxTerminalOptions(running);
        // VS Code shows a thrown error to the user.
        if (typeof options === 'string') {
          throw new Error(options);
        }
        if (!options) {
          // Start reported why already; this says what it means for the terminal.
          throw new Error(vscode.l10n.t('The Bot Screen is not running, so there is no sandbox terminal to open.'));
        }
        showWhenOpened(options);
        return new vscode.TerminalProfile(options);
      },
    }),
  );
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
  ctx.register(ctx.controller.onStatus(apply));
  apply(ctx.controller.status);
  return [
    {
      id: 'botScreen.openSandboxTerminal',
      needsScreen: true,
      run: (running) => {
        const options = sandboxTerminalOptions(running);
        if (typeof options === 'string') {
          void vscode.window.showErrorMessage(options);
        } else {
          vscode.window.createTerminal(options).show();
        }
      },
    },
  ];
}

/**
 * Shows the profile's terminal once VS Code opens it. VS Code makes the last terminal active
 * right after the profile is provided, before the extension host has created it, so the terminal
 * the user picked stayed behind the one already open and took no keys. VS Code opens the
 * terminal with the very options object the profile carried, which is how it is told apart.
 */
function showWhenOpened(options: vscode.TerminalOptions): void {
  const opened = vscode.window.onDidOpenTerminal((terminal) => {
    if (terminal.creationOptions === options) {
      done();
      terminal.show();
    }
  });
  // A profile VS Code never opens (its creation failed) leaves no listener behind.
  const timer = setTimeout(() => done(), 60_000);
  const done = () => {
    clearTimeout(timer);
    opened.dispose();
  };
}

function sessionEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(SESSION_KEYS.filter((key) => env[key]).map((key) => [key, env[key]]));
}

/** How to open a shell in the running screen's sandbox, or why this backend has no interactive terminal. */
function sandboxTerminalOptions(running: RunningScreen): vscode.TerminalOptions | string {
  const shell = running.sandbox.terminal?.(sessionEnv(running.screen.env));
  if (!shell) {
    return vscode.l10n.t('The {0} backend cannot open an interactive terminal.', running.sandbox.backend);
  }
  return {
    name: vscode.l10n.t('Bot Screen: {0}', running.sandbox.onHost ? hostShortName() : running.sandbox.name),
    shellPath: shell.command,
    shellArgs: [...shell.args],
    iconPath: new vscode.ThemeIcon('vm'),
  };
}
