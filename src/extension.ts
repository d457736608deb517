/**
 * The extension's entry point: activation builds the context (src/ctx.ts), registers the command
 * table and the agent tools, and resumes a screen that outlived a window reload; deactivation
 * disposes the context.
 */
import * as vscode from 'vscode';
import { browserCommands } from './commands/browser';
import { controlCommands } from './commands/control';
import { externalViewerCommands } from './commands/externalViewer';
import { imageCommands } from './commands/image';
import { recordingCommands } from './commands/recording';
import { screenCommands } from './commands/screen';
import { screenshotCommands } from './commands/screenshot';
import { registerCommands } from './commands/table';
import { terminalCommands } from './commands/terminal';
import { viewModeCommands } from './commands/viewMode';
import { walkthroughCommands } from './commands/walkthrough';
import { Ctx } from './ctx';
import { migrateRetiredImage, userSetting } from './settings';
import { registerAgentTools } from './lm/tools';
import { ScreensOverview } from './screensTree';

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const current = new Ctx(context);
  ctx = current;
  // Every command of the extension, by family (each file lists its own).
  registerCommands(current, [
    screenCommands,
    imageCommands,
    controlCommands,
    terminalCommands,
    screenshotCommands,
    externalViewerCommands,
    browserCommands,
    walkthroughCommands,
    viewModeCommands,
    recordingCommands,
  ]);
  current.recordings.watchActions(registerAgentTools(current));
  current.register(new ScreensOverview(current));
  if (!vscode.workspace.isTrusted) {
    // Restricted Mode: nothing runs (the controller refuses too); trusting the window resumes.
    void current.controller.attach();
    context.subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(() => resume(current)));
    return;
  }
  resume(current);
}

/**
 * A screen that outlived a window reload is found again; nothing is created here but what the
 * user's own autoStart asks for (a workspace's autoStart is ignored). Only a marker of this
 * workspace (a file read) makes window start call a sandbox CLI at all. Not awaited: a slow
 * Docker daemon must not hold up activation.
 */
function resume(current: Ctx): void {
  void migrateRetiredImage(current.log)
    .catch((err: unknown) => current.log.warn(`settings migration failed: ${String(err)}`))
    .then(() => (current.controller.hasMarker() ? current.controller.attach() : undefined))
    .then(() => {
      if (userSetting<boolean>('autoStart') === true && current.controller.status.state !== 'running') {
        void vscode.commands.executeCommand('botScreen.start');
      }
    });
}

export function deactivate(): void {
  ctx?.dispose();
  ctx = undefined;
}
