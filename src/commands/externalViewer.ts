import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { listenForViewers, type ViewerListener } from '../core/viewerListener';
import { hostPlace } from '../messages';
import { runningScreen } from './screen';

/**
 * "Connect External VNC Viewer": the screen's RFB on a loopback TCP port for people who prefer a
 * native viewer. The port closes when the screen stops or the window closes. Its input counts
 * as one more viewer in the lease: it reaches the screen only after Take control.
 */
/**
 * host:port of the listener as the user's machine sees it. VS Code maps only http(s) addresses,
 * so the http form of the loopback port is mapped and its authority is what a VNC viewer needs.
 * A tunnel that maps it to an https web address carries no raw TCP: then there is none.
 */
async function userSideAddress(port: number): Promise<{ readonly address?: string; readonly web: string }> {
  const external = await vscode.env.asExternalUri(vscode.Uri.parse(`http://127.0.0.1:${port}`));
  const address = external.scheme === 'http' && /:\d+$/.test(external.authority) ? external.authority : undefined;
  return { address, web: external.toString(true) };
}

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
  ctx.own({ dispose: () => void close() });

  ctx.registerCommand('botScreen.connectExternalViewer', async () => {
    if (!(await runningScreen(ctx))) {
      return;
    }
    listener ??= await listenForViewers(() => ctx.controller.openRelay(), () => ctx.control.viewerHolds(viewerId));
    const local = `127.0.0.1:${listener.port}`;
    const { address, web } = await userSideAddress(listener.port);
    if (!address) {
      ctx.log.warn(`the external viewer port ${local} is forwarded to the user only as ${web}, which a VNC viewer cannot use`);
      void vscode.window.showWarningMessage(
        vscode.l10n.t('VS Code forwards the viewer port opened {0} only as the web address {1}, which a VNC viewer cannot connect to. Use the Screen view, or a VNC viewer {0}.', hostPlace(), web),
      );
      return;
    }
    ctx.log.info(`external viewers may connect to ${local}${address === local ? '' : `, reachable as ${address}`}`);
    await vscode.env.clipboard.writeText(address);
    const take = vscode.l10n.t('Take control for the external viewer');
    const choice = await vscode.window.showInformationMessage(
      vscode.env.remoteName
        ? vscode.l10n.t('Point a VNC viewer on your machine at {0} (copied; VS Code forwards it from the port {1} opened {2}, no password). It is view-only until it takes control.', address, String(listener.port), hostPlace())
        : vscode.l10n.t('Point a VNC viewer at {0} (copied; no password, reachable from this machine only). It is view-only until it takes control.', address),
      take,
    );
    if (choice === take) {
      ctx.control.take(viewerId);
    }
  });
}
