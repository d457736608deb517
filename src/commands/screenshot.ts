// The Save Screenshot command (the capture and the file are ../saveScreenshot.ts).
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { saveScreenshot } from '../saveScreenshot';
import type { Command } from './table';

/**
 * "Bot Screen: Save Screenshot" (see ../saveScreenshot.ts). Called with a Uri of a writable file
 * system (scripts, tests), it writes there without asking; the editor title button passes the
 * panel's own `webview-panel:` Uri, which is no place to write, so it asks.
 */
export function screenshotCommands(ctx: Ctx): Command[] {
  return [
    {
      id: 'botScreen.saveScreenshot',
      // Like every command that acts on the screen: started first when it is not running (a
      // failed start is reported by Start itself).
      needsScreen: true,
      run: (running, target?: unknown) =>
        saveScreenshot(ctx, running, target instanceof vscode.Uri && vscode.workspace.fs.isWritableFileSystem(target.scheme) ? target : undefined),
    },
  ];
}
