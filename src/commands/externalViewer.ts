// The external-viewer command: the screen's RFB on a loopback port only this user may use, for native VNC viewers.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { clipboardPolicy } from '../clipboard';
import type { Ctx } from '../ctx';
import { Disposable, toDisposable } from '../core/lifecycle';
import { MAX_CONNECTIONS, refusalLog, supported, type Refusal } from '../core/loopbackGuard';
import { listenForViewers, type ViewerListener } from '../core/viewerListener';
import { hostPlace } from '../messages';
import type { Command } from './table';

/**
 * "Connect External VNC Viewer": the screen's RFB on a loopback TCP port for people who prefer a
 * native viewer. The port closes when the screen stops or the window closes. Only this user's
 * processes may connect (the kernel tells us the connecting socket's owner; see
 * core/loopbackGuard.ts), so it needs no password. Each connection is its own viewer in the
 * lease: it reaches the screen only after Take control, which goes to the viewer connected last.
 */
/** Lease viewer ids of this window's external viewers start with this. */
const viewerPrefix = `external-${randomUUID()}`;

/** True while one of this window's external viewer connections holds control. */
export function externalViewerHolds(ctx: Ctx): boolean {
  const holder = ctx.control.current.viewerId;
  return ctx.control.humanHolds() && holder !== undefined && holder.startsWith(`${viewerPrefix}-`);
}

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

export function externalViewerCommands(ctx: Ctx): Command[] {
  const port = ctx.register(new ExternalViewerPort(ctx));
  return [
    {
      id: 'botScreen.connectExternalViewer',
      needsScreen: true,
      unavailable: () =>
        supported()
          ? undefined
          : vscode.l10n.t(
              'Bot Screen can limit a loopback port to your own user only on Linux, so it does not open the external viewer port on {0}. Use the Screen view instead.',
              process.platform,
            ),
      run: () => port.connect(),
    },
  ];
}

/** This window's external viewer port: opened on demand, closed when the screen stops or the window closes. */
class ExternalViewerPort extends Disposable {
  private listener: ViewerListener | undefined;
  private readonly log: (reason: Refusal, detail: string) => void;
  private warnedOtherUser = false;

  constructor(private readonly ctx: Ctx) {
    super();
    this.log = refusalLog(ctx.log, 'external viewer port');
    this.register(ctx.controller.onStatus((status) => status.state !== 'running' && void this.close()));
    // Keys and buttons an external viewer held are released as soon as it no longer holds control.
    this.register(ctx.control.onDidChange(() => this.listener?.releaseHeld()));
    // The palette's Hand Back is this window's to offer while its external viewer holds control
    // too (package.json: commandPalette), not only while one of its webviews does.
    this.register(
      ctx.control.onDidChange(() => void vscode.commands.executeCommand('setContext', 'botScreen.externalViewerHasControl', externalViewerHolds(ctx))),
    );
    this.register(toDisposable(() => void this.close()));
  }

  async connect(): Promise<void> {
    const listener = (this.listener ??= await listenForViewers({
      openRelay: () => this.ctx.controller.openRelay(),
      control: {
        holds: (viewerId) => this.ctx.control.viewerHolds(viewerId),
        take: (viewerId) => void this.ctx.control.take(viewerId),
        handBack: (viewerId) => void this.ctx.control.handBack(viewerId),
      },
      viewerPrefix,
      onRefused: (reason, detail) => this.onRefused(reason, detail),
      clipboard: clipboardPolicy,
      onViewer: (viewerId) => this.ctx.viewers.add(viewerId, 'external'),
      onStreamError: (viewerId, detail) => this.ctx.log.warn(`closed external viewer connection ${viewerId}: its screen stream could not be followed (${detail})`),
    }));
    const local = `127.0.0.1:${listener.port}`;
    const { address, web } = await userSideAddress(listener.port);
    if (!address) {
      this.ctx.log.warn(`the external viewer port ${local} is forwarded to the user only as ${web}, which a VNC viewer cannot use`);
      void vscode.window.showWarningMessage(
        vscode.l10n.t('VS Code forwards the viewer port opened {0} only as the web address {1}, which a VNC viewer cannot connect to. Use the Screen view, or a VNC viewer {0}.', hostPlace(), web),
      );
      return;
    }
    this.ctx.log.info(`external viewers of this user may connect to ${local}${address === local ? '' : `, reachable as ${address}`} (at most ${MAX_CONNECTIONS} at once)`);
    await vscode.env.clipboard.writeText(address);
    const take = vscode.l10n.t('Take control for the external viewer');
    const choice = await vscode.window.showInformationMessage(
      vscode.env.remoteName
        ? vscode.l10n.t('Point a VNC viewer on your machine at {0} (copied; VS Code forwards it from the port {1} opened {2}, no password). It is view-only until it takes control.', address, String(listener.port), hostPlace())
        : vscode.l10n.t('Point a VNC viewer at {0} (copied; no password: only your user on this machine can connect). It is view-only until it takes control.', address),
      take,
    );
    if (choice !== take) {
      return;
    }
    const granted = this.listener?.takeControl();
    if (granted) {
      this.ctx.log.info(`control given to external viewer connection ${granted}`);
    } else {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('No VNC viewer is connected to {0} yet. Connect it, then run Connect External VNC Viewer again to take control.', address),
      );
    }
  }

  private async close(): Promise<void> {
    const current = this.listener;
    this.listener = undefined;
    if (current) {
      await current.close(); // each connection hands back as it closes
      this.ctx.log.info(`closed the external viewer port ${current.port}`);
    }
  }

  private onRefused(reason: Refusal, detail: string): void {
    this.log(reason, detail);
    if (reason === 'otherUser' && !this.warnedOtherUser) {
      this.warnedOtherUser = true;
      void vscode.window.showWarningMessage(
        vscode.l10n.t('Another user of this machine tried to connect to the external VNC viewer port; Bot Screen refused it ({0}).', detail),
      );
    }
  }
}
