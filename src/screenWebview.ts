import * as vscode from 'vscode';
import type { Logger } from './core/logger';
import { RfbPump } from './core/pump';
import type { StreamProcess } from './core/runner';
import type { ScreenController } from './core/screen';
import { ScreenError } from './core/problem';
import { problemMessage, statusView, viewStrings } from './messages';
import type { HostToWebview, ViewAction, WebviewToHost } from './protocol';
import { screenHtml, webviewRoots } from './webviewHtml';

/**
 * Binds one webview (the sidebar Screen view or the editor panel) to the screen. Each viewer
 * has its own relay; closing a viewer kills that relay only, never the screen. While the
 * viewer is hidden its relay is not read, so no bytes flow and the RFB session waits intact.
 */
export class ScreenWebview implements vscode.Disposable {
  private relay: StreamProcess | undefined;
  private pump: RfbPump | undefined;
  private visible: boolean;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly webview: vscode.Webview,
    extensionUri: vscode.Uri,
    private readonly controller: ScreenController,
    private readonly log: Logger,
    private readonly inEditor: boolean,
    visible: boolean,
  ) {
    this.visible = visible;
    webview.options = { enableScripts: true, localResourceRoots: webviewRoots(extensionUri) };
    webview.html = screenHtml(webview, extensionUri, vscode.l10n.t('Bot Screen'));
    this.disposables.push(
      webview.onDidReceiveMessage((message: WebviewToHost) => this.receive(message)),
      controller.onStatus((status) => {
        if (status.state !== 'running') {
          this.closeRelay(status.state === 'gone' ? problemMessage({ code: 'sandboxGone' }) : '');
        }
        this.post({ type: 'status', status: statusView(status, inEditor) });
      }),
    );
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    this.pump?.setVisible(visible);
  }

  dispose(): void {
    this.closeRelay('');
    vscode.Disposable.from(...this.disposables).dispose();
  }

  private receive(message: WebviewToHost): void {
    switch (message.type) {
      case 'ready':
        // A new document (first load, or re-created after being discarded): any old relay
        // belongs to a session that no longer exists.
        this.closeRelay('');
        this.post({ type: 'hello', strings: viewStrings(), status: statusView(this.controller.status, this.inEditor) });
        break;
      case 'connect':
        this.openRelay();
        break;
      case 'disconnect':
        this.closeRelay('');
        break;
      case 'rfb':
        this.relay?.stdin.write(message.data);
        break;
      case 'action':
        void vscode.commands.executeCommand(actionCommand(message.action));
        break;
      case 'frame':
        this.log.debug(`first frame drawn in the ${this.inEditor ? 'editor panel' : 'Screen view'}`);
        break;
    }
  }

  private openRelay(): void {
    this.closeRelay('');
    let relay: StreamProcess;
    try {
      relay = this.controller.openRelay();
    } catch (err) {
      const reason = err instanceof ScreenError ? problemMessage(err.problem) : String(err);
      this.post({ type: 'closed', reason });
      return;
    }
    this.relay = relay;
    this.pump = new RfbPump(relay.stdout, (data) => this.webview.postMessage({ type: 'rfb', data } satisfies HostToWebview));
    this.pump.setVisible(this.visible);
    void relay.exited.then(() => {
      if (this.relay === relay) {
        this.relay = undefined;
        this.pump?.dispose();
        this.pump = undefined;
        this.post({ type: 'closed', reason: '' });
      }
    });
    this.post({ type: 'open' });
  }

  private closeRelay(reason: string): void {
    const relay = this.relay;
    if (!relay) {
      return;
    }
    this.relay = undefined;
    this.pump?.dispose();
    this.pump = undefined;
    relay.kill();
    this.post({ type: 'closed', reason });
  }

  private post(message: HostToWebview): void {
    void this.webview.postMessage(message);
  }
}

export function actionCommand(action: ViewAction): string {
  switch (action) {
    case 'start':
      return 'botScreen.start';
    case 'stop':
      return 'botScreen.stop';
    case 'openInEditor':
      return 'botScreen.openInEditor';
    case 'installHostDesktop':
      return 'botScreen.installHostDesktop';
    case 'showLogs':
      return 'botScreen.showLogs';
    case 'switchImage':
      return 'botScreen.switchImage';
    case 'keepImage':
      return 'botScreen.keepImage';
  }
}
