// The extension's context: the one owner of its objects and their disposal.
import * as vscode from 'vscode';
import { Control } from './control';
import { PortForwarder } from './core/forward';
import { LeaseStore } from './core/lease';
import { Disposable } from './core/lifecycle';
import { MarkerStore } from './core/marker';
import { ViewerRegistry } from './core/viewers';
import { WorkspaceRecords } from './core/screenList';
import { SandboxBackends } from './core/backends/registry';
import type { ProgressStep } from './core/progress';
import { ScreenController } from './core/screen';
import { readSettings, workspaceKey } from './settings';
import { Recordings } from './recording';
import { ScreenViews } from './screenViews';
import { PlacementStatusBar } from './statusBar';
import { approvedHosts, IgnoredSettingsNotice } from './trust';
import { ViewerCount } from './viewerCount';

/**
 * The one owner of the extension's objects: everything registered here is disposed on
 * deactivation, which also kills every relay and closes every forward (never the screens, which
 * outlive a window reload).
 */
export class Ctx extends Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly controller: ScreenController;
  readonly views: ScreenViews;
  readonly control: Control;
  /** The viewers watching this workspace's screen, in every window. */
  readonly viewers: ViewerCount;
  /** Long work outside a start or stop (an image build) shows its spinner through whileBusy. */
  readonly statusBar: PlacementStatusBar;
  /** Ports of the running screen's sandbox forwarded here; closed when the screen stops. */
  readonly forwards: PortForwarder;
  /** The flight recorder of this window's screen. */
  readonly recordings: Recordings;
  /** Every window's screen markers (this window's controller writes its own there). */
  readonly markers: MarkerStore;
  /** Every window's workspace name and folder, by workspace key (the Screens view names screens by them). */
  readonly workspaces: WorkspaceRecords;

  constructor(readonly extension: vscode.ExtensionContext) {
    super();
    this.log = this.register(vscode.window.createOutputChannel(vscode.l10n.t('Bot Screen'), { log: true }));
    const markers = (this.markers = new MarkerStore(vscode.Uri.joinPath(extension.globalStorageUri, 'screens').fsPath));
    this.workspaces = new WorkspaceRecords(vscode.Uri.joinPath(extension.globalStorageUri, 'workspaces').fsPath);
    const leases = new LeaseStore(vscode.Uri.joinPath(extension.globalStorageUri, 'leases').fsPath, workspaceKey());
    this.control = this.register(new Control(leases));
    this.viewers = this.register(new ViewerCount(new ViewerRegistry(leases.dir, leases.key)));
    this.controller = this.register(
      new ScreenController(new SandboxBackends((step) => this.showProgress(step)), () => readSettings(this.log), this.log, markers, {
        humanHasControl: () => this.control.humanHolds(),
        // Restricted Mode: nothing runs, not even a probe.
        trusted: () => vscode.workspace.isTrusted,
        hosts: approvedHosts(extension.globalState),
      }),
    );
    this.forwards = this.register(new PortForwarder());
    this.register(this.controller.onStatus((status) => status.state !== 'running' && void this.forwards.close()));
    this.views = this.register(new ScreenViews(extension.extensionUri, this.controller, this.control, this.log, this.viewers));
    this.statusBar = this.register(new PlacementStatusBar(this.controller, this.control));
    this.recordings = this.register(new Recordings(extension, this.controller, this.control, this.viewers, this.log, markers, this.workspaces));
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
    this.register(this.controller.onStatus(screenContext));
    this.register(this.control.onDidChange(controlContext));
    this.register(
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

  /** A long step of the screen's start as a notification, shown until that start ends. */
  private showProgress(step: ProgressStep): void {
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
  }
}
