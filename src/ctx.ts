import * as vscode from 'vscode';
import { MarkerStore } from './core/marker';
import { ScreenController } from './core/screen';
import { readSettings } from './settings';
import { ScreenViews } from './screenViews';
import { PlacementStatusBar } from './statusBar';

/**
 * The one owner of the extension's VS Code objects: everything registered here is disposed on
 * deactivation, which also kills every relay (never the screens, which outlive a window reload).
 */
export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly controller: ScreenController;
  readonly views: ScreenViews;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly extension: vscode.ExtensionContext) {
    this.log = this.own(vscode.window.createOutputChannel(vscode.l10n.t('Bot Screen'), { log: true }));
    const markers = new MarkerStore(vscode.Uri.joinPath(extension.globalStorageUri, 'screens').fsPath);
    this.controller = new ScreenController(() => readSettings(this.log), this.log, markers);
    this.own({ dispose: () => this.controller.dispose() });
    this.views = this.own(new ScreenViews(extension.extensionUri, this.controller, this.log));
    this.own(new PlacementStatusBar(this.controller));
  }

  registerCommand(id: string, handler: (...args: unknown[]) => unknown): void {
    this.own(vscode.commands.registerCommand(id, handler));
  }

  own<T extends vscode.Disposable>(disposable: T): T {
    this.disposables.push(disposable);
    return disposable;
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0).reverse()) {
      disposable.dispose();
    }
  }
}
