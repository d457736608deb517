import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { listenForViewers, type ViewerListener } from '../core/viewerListener';
import { runningScreen } from './screen';

/**
 * "Connect External VNC Viewer": the screen's RFB on a loopback TCP port for people who prefer a
 * native viewer. The port closes when the screen stops or the window closes. Its input counts
 * as one more viewer in the lease: it reaches the screen only after Take control.
 */
export function registerExternalViewerCommands(ctx: Ctx): void {
  const viewerId = `external-${randomUUID()}`;
  let listener: ViewerListener | undefined;
  const close = async () => {
    const current = listener;
    listener = undefined;
    if (current) {
      await current.close();
      ctx.control.handBack(viewerId);
      ctx.log.info(`closed the external viewer port ${current.port}`);
    }
  };
  ctx.own(ctx.controller.onStatus((status) => status.state !== 'running' && void close()));
  // Keys and buttons the external viewer held are released as soon as it no longer holds control.
  ctx.own(ctx.control.onDidChange(() => !ctx.control.viewerHolds(viewerId) && listener?.releaseHeld()));
  ctx.own({ dispose: () => void close() });

  ctx.registerCommand('botScreen.connectExternalViewer', async () => {
    if (!(await runningScreen(ctx))) {
      return;
    }
    listener ??= await listenForViewers(() => ctx.controller.openRelay(), () => ctx.control.viewerHolds(viewerId));
    const address = `127.0.0.1:${listener.port}`;
    ctx.log.info(`external viewers may connect to ${address}`);
    await vscode.env.clipboard.writeText(address);
    const take = vscode.l10n.t('Take control for the external viewer');
    const choice = await vscode.window.showInformationMessage(
      vscode.l10n.t('Point a VNC viewer at {0} (copied; no password, reachable from this machine only). It is view-only until it takes control.', address),
      take,
    );
    if (choice === take) {
      ctx.control.take(viewerId);
    }
  });
}
