import * as vscode from 'vscode';
import type { Control } from './control';
import type { ScreenController, ScreenStatus } from './core/screen';
import { placementLabel } from './core/placement';
import { placementHeadline, problemMessage, stateLabel } from './messages';

/** The placement at a glance: sandbox, this machine, or refused; a tooltip of command links. */
export class PlacementStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('botScreen.placement', vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly controller: ScreenController,
    private readonly control: Control,
  ) {
    this.item.name = vscode.l10n.t('Bot Screen placement');
    this.item.command = 'botScreen.openInEditor';
    this.disposables.push(
      controller.onStatus((status) => this.render(status)),
      control.onDidChange(() => this.render(controller.status)),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('botScreen')) {
          this.render(controller.status);
        }
      }),
    );
    this.render(controller.status);
  }

  private render(status: ScreenStatus): void {
    const shown = vscode.workspace.getConfiguration('botScreen').get<boolean>('statusBar.visible', true);
    if (!shown) {
      this.item.hide();
      return;
    }
    // Before a start, show where a start would put the screen under the current settings.
    const placement = status.placement ?? this.controller.placement();
    const where = !placement
      ? { icon: '$(error)', text: vscode.l10n.t('refused') }
      : placement.where === 'sandbox'
        ? { icon: '$(vm)', text: vscode.l10n.t('{0} sandbox', placement.backend) }
        : placement.where === 'host'
          ? { icon: '$(device-desktop)', text: vscode.l10n.t('this machine') }
          : { icon: '$(error)', text: vscode.l10n.t('refused') };
    const running = status.state === 'running' ? '$(circle-filled)' : '$(circle-outline)';
    this.item.text = `${where.icon} ${vscode.l10n.t('Screen: {0}', where.text)} ${running}`;
    this.item.backgroundColor =
      placement?.where === 'refused' || !placement || status.state === 'gone'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : undefined;
    const tooltip = new vscode.MarkdownString('', true);
    tooltip.isTrusted = {
      enabledCommands: ['botScreen.start', 'botScreen.stop', 'botScreen.openInEditor', 'botScreen.showLogs', 'botScreen.takeControl', 'botScreen.handBack'],
    };
    tooltip.appendMarkdown(`**${vscode.l10n.t('Bot Screen')}**: ${stateLabel(status.state)}\n\n`);
    tooltip.appendText(`${placementHeadline(placement)} (${placement ? placementLabel(placement) : 'refused'})`);
    if (status.state === 'running' && status.screen) {
      tooltip.appendMarkdown('\n\n');
      tooltip.appendText(vscode.l10n.t('Display {0}, {1}, in {2}.', status.screen.display, status.screen.geometry, status.sandbox?.name ?? ''));
    }
    if (status.state === 'running') {
      tooltip.appendMarkdown('\n\n');
      tooltip.appendText(
        this.control.humanHolds() ? vscode.l10n.t('A person has control; the agent waits.') : vscode.l10n.t('The agent has control.'),
      );
    }
    if (status.problem) {
      tooltip.appendMarkdown('\n\n');
      tooltip.appendText(problemMessage(status.problem));
    }
    const links = [
      status.state === 'running'
        ? `[$(debug-stop) ${vscode.l10n.t('Stop Screen')}](command:botScreen.stop)`
        : `[$(play) ${vscode.l10n.t('Start Screen')}](command:botScreen.start)`,
      ...(status.state !== 'running'
        ? []
        : this.control.humanHolds()
          ? [`[$(lock) ${vscode.l10n.t('Hand back')}](command:botScreen.handBack)`]
          : [`[$(unlock) ${vscode.l10n.t('Take control')}](command:botScreen.takeControl)`]),
      `[$(window) ${vscode.l10n.t('Open Screen in Editor')}](command:botScreen.openInEditor)`,
      `[$(output) ${vscode.l10n.t('Show Logs')}](command:botScreen.showLogs)`,
    ];
    tooltip.appendMarkdown(`\n\n${links.join(' · ')}`);
    this.item.tooltip = tooltip;
    this.item.show();
  }

  dispose(): void {
    vscode.Disposable.from(...this.disposables).dispose();
    this.item.dispose();
  }
}
