import * as vscode from 'vscode';
import { Control } from './control';
import { LeaseStore } from './core/lease';
import type { Logger } from './core/logger';
import { MarkerStore } from './core/marker';
import { SandboxBackends } from './core/backends/registry';
import { ScreenController } from './core/screen';
import { readSettings, workspaceKey } from './settings';
import { ScreenViews } from './screenViews';
import { PlacementStatusBar } from './statusBar';
import { approvedHosts, IgnoredSettingsNotice } from './trust';

/**
 * The one owner of the extension's VS Code objects: everything registered here is disposed on
 * deactivation, which also kills every relay (never the screens, which outlive a window reload).
 */
export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly controller: ScreenController;
  readonly views: ScreenViews;
  readonly control: Control;
  /** Long work outside a start or stop (an image build) shows its spinner through whileBusy. */
  readonly statusBar: PlacementStatusBar;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly extension: vscode.ExtensionContext) {
    this.log = this.own(vscode.window.createOutputChannel(vscode.l10n.t('Bot Screen'), { log: true }));
    const markers = new MarkerStore(vscode.Uri.joinPath(extension.globalStorageUri, 'screens').fsPath);
    const leases = new LeaseStore(vscode.Uri.joinPath(extension.globalStorageUri, 'leases').fsPath, workspaceKey());
    this.control = this.own(new Control(leases));
    this.controller = new ScreenController(new SandboxBackends(), () => readSettings(this.log), this.withProgress(this.log), markers, {
      humanHasControl: () => this.control.humanHolds(),
      // Restricted Mode: nothing runs, not even a probe.
      trusted: () => vscode.workspace.isTrusted,
      hosts: approvedHosts(extension.globalState),
    });
    this.own({ dispose: () => this.controller.dispose() });
    this.views = this.own(new ScreenViews(extension.extensionUri, this.controller, this.control, this.log));
    this.statusBar = this.own(new PlacementStatusBar(this.controller, this.control));
    // Menus and the palette offer only what applies now, by these keys: Start or Stop, Take
    // control or Hand back (Hand back only where this window holds control), Switch/Keep only
    // while the image question is open, Install Desktop only for a screen on this machine.
    // Keys that follow the screen (and the settings a start would read); control changes, many
    // more of them, touch only the control keys.
    const screenContext = () => {
      const status = this.controller.status;
      // The running screen's own placement; else where a start would put it now.
      const placement = status.state === 'running' ? status.placement : this.controller.placement();
      void vscode.commands.executeCommand('setContext', 'botScreen.running', status.state === 'running');
      void vscode.commands.executeCommand('setContext', 'botScreen.switchPending', status.imageSwitch !== undefined);
      void vscode.commands.executeCommand('setContext', 'botScreen.onThisMachine', placement?.where === 'host');
    };
    const controlContext = () => {
      void vscode.commands.executeCommand('setContext', 'botScreen.humanHasControl', this.control.humanHolds());
      void vscode.commands.executeCommand('setContext', 'botScreen.windowHasControl', this.views.viewers().some((viewer) => viewer.holdsControl()));
    };
    const notice = new IgnoredSettingsNotice(this.log);
    notice.check();
    this.own(this.controller.onStatus(screenContext));
    this.own(this.control.onDidChange(controlContext));
    this.own(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('botScreen')) {
          notice.check();
          screenContext();
        }
      }),
    );
    screenContext();
    controlContext();
  }

  /**
   * The core's log plus its progress steps as a notification, shown until the screen's current
   * operation (a start, a switch) ends.
   */
  private withProgress(log: vscode.LogOutputChannel): Logger {
    return {
      debug: (message) => log.debug(message),
      info: (message) => log.info(message),
      warn: (message) => log.warn(message),
      error: (message) => log.error(message),
      progress: (step) => {
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Bot Screen: pulling the image {0}…', step.image) },
          () =>
            new Promise<void>((resolve) => {
              const watch = this.controller.onStatus((status) => {
                if (status.state !== 'starting') {
                  watch.dispose();
                  resolve();
                }
              });
            }),
        );
      },
    };
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
