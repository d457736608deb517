import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { saveScreenshot } from '../saveScreenshot';

/**
 * "Bot Screen: Save Screenshot" (see ../saveScreenshot.ts). Called with a Uri of a writable file
 * system (scripts, tests), it writes there without asking; the editor title button passes the
 * panel's own `webview-panel:` Uri, which is no place to write, so it asks.
 */
export function registerScreenshotCommands(ctx: Ctx): void {
  ctx.registerCommand('botScreen.saveScreenshot', (target?: unknown) =>
    saveScreenshot(ctx, target instanceof vscode.Uri && vscode.workspace.fs.isWritableFileSystem(target.scheme) ? target : undefined),
  );
}
