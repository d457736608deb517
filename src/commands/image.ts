import * as vscode from 'vscode';
import { ScreenError } from '../core/problem';
import type { Ctx } from '../ctx';
import { problemMessage } from '../messages';
import { pinImage } from '../settings';
import { askPerson } from '../trust';

/**
 * Switch image / Keep current image: the two answers to a pending default-image change. Both
 * pin an image, which ends the question; nothing headless ever answers it.
 */
export function registerImageCommands(ctx: Ctx): void {
  ctx.registerCommand('botScreen.switchImage', () => switchImage(ctx));
  ctx.registerCommand('botScreen.keepImage', () => keepImage(ctx));
}

function pending(ctx: Ctx) {
  const imageSwitch = ctx.controller.status.imageSwitch;
  if (!imageSwitch) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No sandbox image switch is pending for this workspace.'));
  }
  return imageSwitch;
}

async function keepImage(ctx: Ctx): Promise<void> {
  const imageSwitch = pending(ctx);
  if (imageSwitch) {
    await pinImage(imageSwitch.current);
    ctx.log.info(`kept the sandbox image ${imageSwitch.current} (pinned)`);
    await ctx.controller.attach();
  }
}

async function switchImage(ctx: Ctx): Promise<void> {
  const imageSwitch = pending(ctx);
  if (!imageSwitch) {
    return;
  }
  await pinImage(imageSwitch.target);
  ctx.log.info(`switching the sandbox to ${imageSwitch.target} (pinned)`);
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Switching the sandbox to {0}…', imageSwitch.target) },
    async () => {
      try {
        // The pinned image differs from the container's, so the start makes sure the new image
        // exists (pulling it if needed) before it replaces the old container.
        await ctx.controller.stop();
        await ctx.controller.start(askPerson);
      } catch (err) {
        const message = err instanceof ScreenError ? problemMessage(err.problem) : String(err);
        ctx.log.error(message);
        void vscode.window.showErrorMessage(message);
      }
    },
  );
}
