/** The two homes of the screen's viewer: the sidebar Screen view and the editor panel. */
import * as vscode from 'vscode';
import type { Control } from './control';
import { Disposable } from './core/lifecycle';
import type { Logger } from './core/logger';
import type { ScreenController } from './core/screen';
import { DirectEndpoint } from './directEndpoint';
import { ScreenWebview } from './screenWebview';
import type { ViewerCount } from './viewerCount';

export const SCREEN_VIEW_ID = 'botScreen.screen';
/** The editor panel's viewType (also in package.json: `onWebviewPanel:`, `activeWebviewPanelId`). */
const PANEL_TYPE = 'botScreen.panel';

/** The sidebar "Screen" view and the editor panel: two homes for the same screen. */
export class ScreenViews extends Disposable implements vscode.WebviewViewProvider, vscode.WebviewPanelSerializer {
  private sidebar: ScreenWebview | undefined;
  private sidebarVisible = false;
  private panel: { panel: vscode.WebviewPanel; screen: ScreenWebview } | undefined;
  private readonly direct: DirectEndpoint;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ScreenController,
    private readonly control: Control,
    private readonly log: Logger,
    private readonly viewerCount: ViewerCount,
  ) {
    super();
    this.direct = this.register(new DirectEndpoint(vscode.Uri.joinPath(extensionUri, 'dist', 'bridge.js').fsPath, log));
    // A running screen is about to be watched: the bridge process starts and listens before the
    // first viewer opens, not while its webview waits for the address (a fork is ~0.1 s).
    const warm = () => controller.status.state === 'running' && void this.direct.resolve();
    warm();
    this.register(controller.onStatus(warm));
    this.register(
      vscode.window.registerWebviewViewProvider(SCREEN_VIEW_ID, this, {
        // Kept documents resume in about 0.25 s instead of about 1.4 s for a new one; hidden
        // views are paused by the bridge, so retaining costs no streaming.
        webviewOptions: { retainContextWhenHidden: true },
      }),
    );
    // The editor panel comes back after a window reload (activation `onWebviewPanel:`).
    this.register(vscode.window.registerWebviewPanelSerializer(PANEL_TYPE, this));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.sidebar?.dispose();
    const screen = new ScreenWebview(view.webview, this.extensionUri, this.controller, this.control, this.log, false, view.visible, this.direct, this.viewerCount);
    this.sidebar = screen;
    this.sidebarVisible = view.visible;
    view.onDidChangeVisibility(() => {
      this.sidebarVisible = view.visible;
      screen.setVisible(view.visible);
    });
    view.onDidDispose(() => {
      screen.dispose();
      if (this.sidebar === screen) {
        this.sidebar = undefined;
      }
    });
  }

  openInEditor(): void {
    if (this.panel) {
      this.panel.panel.reveal();
      return;
    }
    // Beside the editor being worked in, so the screen and the code show side by side; in the
    // empty editor area when there is none (no empty group left behind).
    const column = vscode.window.tabGroups.activeTabGroup.activeTab ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
    const panel = vscode.window.createWebviewPanel(PANEL_TYPE, vscode.l10n.t('Bot Screen'), column, {
      retainContextWhenHidden: true,
    });
    this.adopt(panel);
  }

  /**
   * A panel restored after a window reload: bound to the screen like a new one. Its document is
   * new, so it asks for the status and connects when the screen runs; a screen that is gone or
   * stopped shows that state, never a blank panel.
   */
  deserializeWebviewPanel(panel: vscode.WebviewPanel): Thenable<void> {
    if (this.panel) {
      // One panel per window: a second restored one (never created by us) is closed.
      panel.dispose();
    } else {
      this.adopt(panel);
    }
    return Promise.resolve();
  }

  private adopt(panel: vscode.WebviewPanel): void {
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'screen.svg');
    const screen = new ScreenWebview(panel.webview, this.extensionUri, this.controller, this.control, this.log, true, panel.visible, this.direct, this.viewerCount);
    this.panel = { panel, screen };
    panel.onDidChangeViewState(() => screen.setVisible(panel.visible));
    panel.onDidDispose(() => {
      screen.dispose();
      if (this.panel?.panel === panel) {
        this.panel = undefined;
      }
    });
  }

  /** The viewer a palette command acts on: the editor panel when it is active, else a visible one. */
  activeViewer(): ScreenWebview | undefined {
    if (this.panel?.panel.active) {
      return this.panel.screen;
    }
    return this.sidebarVisible && this.sidebar ? this.sidebar : (this.panel?.screen ?? this.sidebar);
  }

  /** The side bar's viewer or the editor panel's: the one whose title toolbar a command came from. */
  viewerIn(where: 'view' | 'panel'): ScreenWebview | undefined {
    return where === 'view' ? this.sidebar : this.panel?.screen;
  }

  /** Every open viewer (to hand back from the palette whichever of ours holds control). */
  viewers(): ScreenWebview[] {
    return [this.sidebar, this.panel?.screen].filter((v): v is ScreenWebview => v !== undefined);
  }

  override dispose(): void {
    // The viewers first: their relays end with the keys they held released, which needs the
    // bridge process (disposed with the endpoint below) still running.
    this.sidebar?.dispose();
    this.panel?.panel.dispose();
    super.dispose();
  }
}
