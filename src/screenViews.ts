import * as vscode from 'vscode';
import type { Control } from './control';
import type { Logger } from './core/logger';
import type { ScreenController } from './core/screen';
import { ScreenWebview } from './screenWebview';

export const SCREEN_VIEW_ID = 'botScreen.screen';
const PANEL_TYPE = 'botScreen.panel';

/** The sidebar "Screen" view and the editor panel: two homes for the same screen. */
export class ScreenViews implements vscode.Disposable, vscode.WebviewViewProvider {
  private sidebar: ScreenWebview | undefined;
  private sidebarVisible = false;
  private panel: { panel: vscode.WebviewPanel; screen: ScreenWebview } | undefined;
  private readonly registration: vscode.Disposable;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ScreenController,
    private readonly control: Control,
    private readonly log: Logger,
  ) {
    this.registration = vscode.window.registerWebviewViewProvider(SCREEN_VIEW_ID, this, {
      // Kept documents resume in about 0.25 s instead of about 1.4 s for a new one; hidden
      // views are paused by the bridge, so retaining costs no streaming.
      webviewOptions: { retainContextWhenHidden: true },
    });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.sidebar?.dispose();
    const screen = new ScreenWebview(view.webview, this.extensionUri, this.controller, this.control, this.log, false, view.visible);
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
    const panel = vscode.window.createWebviewPanel(PANEL_TYPE, vscode.l10n.t('Bot Screen'), vscode.ViewColumn.Active, {
      retainContextWhenHidden: true,
    });
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'screen.svg');
    const screen = new ScreenWebview(panel.webview, this.extensionUri, this.controller, this.control, this.log, true, panel.visible);
    this.panel = { panel, screen };
    panel.onDidChangeViewState(() => screen.setVisible(panel.visible));
    panel.onDidDispose(() => {
      screen.dispose();
      this.panel = undefined;
    });
  }

  /** The viewer a palette command acts on: the editor panel when it is active, else a visible one. */
  activeViewer(): ScreenWebview | undefined {
    if (this.panel?.panel.active) {
      return this.panel.screen;
    }
    return this.sidebarVisible && this.sidebar ? this.sidebar : (this.panel?.screen ?? this.sidebar);
  }

  /** Every open viewer (to hand back from the palette whichever of ours holds control). */
  viewers(): ScreenWebview[] {
    return [this.sidebar, this.panel?.screen].filter((v): v is ScreenWebview => v !== undefined);
  }

  dispose(): void {
    this.registration.dispose();
    this.sidebar?.dispose();
    this.panel?.panel.dispose();
  }
}
