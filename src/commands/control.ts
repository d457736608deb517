/** The control commands: Take control and Hand back from the palette. */
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { SCREEN_VIEW_ID } from '../screenViews';
import { externalViewerHolds } from './externalViewer';
import type { Command } from './table';

/** Take control / Hand back from the palette: they act on the viewer the user is looking at. */
export function controlCommands(ctx: Ctx): Command[] {
  return [
    { id: 'botScreen.takeControl', run: () => takeControl(ctx) },
    { id: 'botScreen.handBack', run: () => handBack(ctx) },
  ];
}

async function takeControl(ctx: Ctx): Promise<void> {
  let viewer = ctx.views.activeViewer();
  if (!viewer) {
    await vscode.commands.executeCommand(`${SCREEN_VIEW_ID}.focus`);
    viewer = ctx.views.activeViewer();
  }
  if (!viewer) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Open the Screen view first: control belongs to a viewer.'));
    return;
  }
  viewer.takeControl();
}

function handBack(ctx: Ctx): void {
  const holder = ctx.views.viewers().find((viewer) => viewer.holdsControl());
  if (holder) {
    ctx.control.handBack(holder.viewerId);
  } else if (externalViewerHolds(ctx)) {
    ctx.control.handBack(ctx.control.current.viewerId);
  } else if (ctx.control.humanHolds()) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Another window holds control of this screen; hand back there.'));
  }
}
