import * as vscode from 'vscode';
import { registerBrowserCommands } from './commands/browser';
import { registerControlCommands } from './commands/control';
import { registerExternalViewerCommands } from './commands/externalViewer';
import { registerImageCommands } from './commands/image';
import { registerScreenCommands } from './commands/screen';
import { registerScreenshotCommands } from './commands/screenshot';
import { registerTerminalCommands } from './commands/terminal';
import { registerWalkthrough } from './commands/walkthrough';
import { Ctx } from './ctx';
import { migrateRetiredImage, userSetting } from './settings';
import { registerAgentTools } from './lm/tools';

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const current = new Ctx(context);
  ctx = current;
  registerScreenCommands(current);
  registerImageCommands(current);
  registerControlCommands(current);
  registerTerminalCommands(current);
  registerScreenshotCommands(current);
  registerAgentTools(current);
  registerExternalViewerCommands(current);
  registerBrowserCommands(current);
  registerWalkthrough(current);
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
