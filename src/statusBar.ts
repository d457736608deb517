/**
 * The "Screen:" status bar item: where the screen runs or would run, whether it runs, who has
 * control, and a tooltip of command links.
 */
import * as vscode from 'vscode';
import type { Control } from './control';
import { Disposable } from './core/lifecycle';
import type { ScreenController, ScreenStatus } from './core/screen';
import { placementLabel } from './core/placement';
import { hostShortName, placementHeadline, problemMessage, stateLabel } from './messages';

export type StatusBarVisibility = 'auto' | 'always' | 'never';

/** `botScreen.statusBar.visible`; the boolean of earlier versions still means always / never. */
export function statusBarVisibility(raw: unknown): StatusBarVisibility {
  if (raw === true || raw === 'always') {
    return 'always';
  }
  return raw === false || raw === 'never' ? 'never' : 'auto';
}

/**
 * The placement at a glance: sandbox, this machine, or refused; a spinner while something is
 * under way; a tooltip of command links. Under `auto` it appears only in a window where a screen
 * has run (a marker at window start, or any start, stop or attach since), so windows that never
 * use Bot Screen carry no item.
 */
export class PlacementStatusBar extends Disposable {
  private readonly item = this.register(vscode.window.createStatusBarItem('botScreen.placement', vscode.StatusBarAlignment.Left, 50));
  private used: boolean;
  private busyCount = 0;
  /** The running screen's latest thumbnail, from the Screens view (screensTree.ts). */
  private thumbnail: { readonly uri: string; readonly caption: string } | undefined;
  /** Read once and again only when the setting changes: renders follow every status and control change. */
  private visibility = readVisibility();

  constructor(
    private readonly controller: ScreenController,
    private readonly control: Control,
  ) {
    super();
    this.item.name = vscode.l10n.t('Bot Screen placement');
    this.item.command = 'botScreen.openInEditor';
    this.used = controller.hasMarker();
    this.register(
      controller.onStatus((status) => {
        this.used = true;
        this.render(status);
      }),
    );
    this.register(control.onDidChange(() => this.render(controller.status)));
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('botScreen')) {
          this.visibility = readVisibility();
          this.render(controller.status);
        }
      }),
    );
    this.render(controller.status);
  }

  /** Shows the spinner until `work` settles (an image build, a pull). */
  whileBusy<T>(work: Thenable<T>): Thenable<T> {
    this.busyCount++;
    this.used = true;
    this.render(this.controller.status);
    const done = () => {
      this.busyCount--;
      this.render(this.controller.status);
    };
    work.then(done, done);
    return work;
  }

  /** Shows the running screen's latest thumbnail in the tooltip (undefined removes it). */
  showThumbnail(thumbnail: { readonly uri: string; readonly caption: string } | undefined): void {
    if (thumbnail?.uri !== this.thumbnail?.uri) {
      this.thumbnail = thumbnail;
      this.render(this.controller.status);
    }
  }

  private render(status: ScreenStatus): void {
    if (this.visibility === 'never' || (this.visibility === 'auto' && !this.used)) {
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
          ? { icon: '$(device-desktop)', text: hostShortName() }
          : { icon: '$(error)', text: vscode.l10n.t('refused') };
    const busy = status.state === 'starting' || status.state === 'stopping' || this.busyCount > 0;
    const running = busy ? '$(loading~spin)' : status.state === 'running' ? '$(circle-filled)' : '$(circle-outline)';
    this.item.text = `${where.icon} ${vscode.l10n.t('Screen: {0}', where.text)} ${running}`;
    const control = status.state === 'running' ? (this.control.humanHolds() ? vscode.l10n.t('a person has control') : vscode.l10n.t('the agent has control')) : '';
    this.item.accessibilityInformation = {
      label: [vscode.l10n.t('Bot Screen, {0}: {1}', where.text, this.busyCount > 0 ? vscode.l10n.t('busy') : stateLabel(status.state)), control]
        .filter(Boolean)
        .join(', '),
      role: 'button',
    };
    this.item.backgroundColor =
      placement?.where === 'refused' || !placement || status.state === 'gone'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : undefined;
    const tooltip = new vscode.MarkdownString('', true);
    tooltip.appendMarkdown(`**${vscode.l10n.t('Bot Screen')}**: ${stateLabel(status.state)}\n\n`);
    tooltip.appendText(`${placementHeadline(placement)} (${placement ? placementLabel(placement) : 'refused'})`);
    if (status.state === 'running' && status.screen) {
      tooltip.appendMarkdown('\n\n');
      tooltip.appendText(vscode.l10n.t('Display {0}, {1}, in {2}.', status.screen.display, status.screen.geometry, status.sandbox?.name ?? ''));
    }
    if (status.state === 'running' && this.thumbnail) {
      tooltip.appendMarkdown(`\n\n![${vscode.l10n.t('Thumbnail of the screen')}](${this.thumbnail.uri})\n\n`);
      tooltip.appendText(this.thumbnail.caption);
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
    const links: readonly (readonly [command: string, icon: string, label: string])[] = [
      status.state === 'running' ? ['botScreen.stop', 'debug-stop', vscode.l10n.t('Stop Screen')] : ['botScreen.start', 'play', vscode.l10n.t('Start Screen')],
      ...(status.state !== 'running'
        ? []
        : this.control.humanHolds()
          ? [['botScreen.handBack', 'lock', vscode.l10n.t('Hand back')] as const]
          : [['botScreen.takeControl', 'unlock', vscode.l10n.t('Take control')] as const]),
      ['botScreen.openInEditor', 'window', vscode.l10n.t('Open Screen in Editor')],
      ['botScreen.showLogs', 'output', vscode.l10n.t('Show Logs')],
    ];
    // Exactly the commands linked here may run from the tooltip.
    tooltip.isTrusted = { enabledCommands: links.map(([command]) => command) };
    tooltip.appendMarkdown(`\n\n${links.map(([command, icon, label]) => `[$(${icon}) ${label}](command:${command})`).join(' · ')}`);
    this.item.tooltip = tooltip;
    this.item.show();
  }
}

function readVisibility(): ReturnType<typeof statusBarVisibility> {
  return statusBarVisibility(vscode.workspace.getConfiguration('botScreen').get('statusBar.visible'));
}
