/**
 * The person's Save Screenshot: a PNG of the screen, written where the user chooses (or to the
 * given file). The picture is taken when the command runs (before the dialog), inside the sandbox
 * like every screen action (the command starts the screen first when it is not running). It is the
 * person's own screenshot, so the agent's control lease does not apply.
 */
import * as vscode from 'vscode';
import { captureScreenshot } from './core/actions/screenshot';
import { errorMessage } from './core/problem';
import type { RunningScreen } from './core/screen';
import type { Ctx } from './ctx';

/** Takes the screenshot of the running screen and saves it to `target`, or where the save dialog says; the saved file's Uri. */
export async function saveScreenshot(ctx: Ctx, running: RunningScreen, target: vscode.Uri | undefined): Promise<vscode.Uri | undefined> {
  let png: Uint8Array;
  try {
    png = (await captureScreenshot(running)).png;
  } catch (err) {
    const message = vscode.l10n.t('Could not take a screenshot: {0}', errorMessage(err));
    ctx.log.error(message);
    void vscode.window.showErrorMessage(message);
    return undefined;
  }
  ctx.controller.noteActivity();
  const uri =
    target ??
    (await vscode.window.showSaveDialog({
      title: vscode.l10n.t('Save Screenshot'),
      defaultUri: defaultTarget(),
      filters: { [vscode.l10n.t('PNG image')]: ['png'] },
      saveLabel: vscode.l10n.t('Save'),
    }));
  if (!uri) {
    return undefined;
  }
  try {
    await vscode.workspace.fs.writeFile(uri, png);
  } catch (err) {
    const message = vscode.l10n.t('Could not save the screenshot to {0}: {1}', uri.fsPath, errorMessage(err));
    ctx.log.error(message);
    void vscode.window.showErrorMessage(message);
    return undefined;
  }
  ctx.log.info(`screenshot saved to ${uri.toString()}`);
  if (!target) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Screenshot saved to {0}.', uri.fsPath));
  }
  return uri;
}

function defaultTarget(): vscode.Uri | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return folder ? vscode.Uri.joinPath(folder, `bot-screen-${stamp}.png`) : undefined;
}
