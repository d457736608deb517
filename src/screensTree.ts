/**
 * The "Screens" tree view: every screen this machine runs for this user (all windows' markers,
 * every backend) with its placement, state, who holds control, and a live thumbnail (icon and
 * tooltip), grabbed every few seconds only while the tree is visible. Clicking this window's
 * screen opens its panel; another window's screen can only be shown and controlled there, so the
 * click says so and offers to switch to that window. The current screen's thumbnail also goes to
 * the status bar's tooltip. Below the screens, a "Recordings" group lists the recordings of
 * screens that no longer run (time span and size): a click replays one, Delete is inline.
 */
import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import type { SandboxBackend } from './core/backends/backend';
import { SandboxBackends } from './core/backends/registry';
import { displayEnv } from './core/actions/sessionExec';
import { Disposable, toDisposable } from './core/lifecycle';
import type { Marker } from './core/marker';
import type { RecordingSummary } from './core/recorderStore';
import type { Sandbox } from './core/sandbox';
import { listScreens, StoppedRecordings, type ListedScreen } from './core/screenList';
import type { ScreenState } from './core/screenState';
import { grabThumbnail, jpegDataUri, markerDisplayEnv, sameThumbnail, ThumbnailError, type Thumbnail } from './core/thumbnail';
import { ThumbnailScheduler } from './core/thumbnailScheduler';
import { hostShortName, recordingSpan, stateLabel, viewersLabel } from './messages';
import { readSettings } from './settings';

export const SCREENS_VIEW_ID = 'botScreen.screens';
/** How often a visible tree grabs each screen and re-reads the markers. */
const REFRESH_MS = 3000;

/**
 * A screen's tree item's element, also the argument its inline commands get
 * (`botScreen.openRecording` included): the screen's workspace key, and whether it is this window's.
 * Item `contextValue`: `botScreen.screen.<own|other>.<state>`, e.g. `botScreen.screen.own.running`.
 */
export interface ScreenNode {
  readonly kind: 'screen';
  readonly key: string;
  readonly own: boolean;
}

/**
 * A recording of a screen that no longer runs, under the "Recordings" group; its commands
 * (open, export, delete) get it and read the screen id from `key`. Item `contextValue`:
 * `botScreen.recording`.
 */
interface RecordingNode {
  readonly kind: 'recording';
  readonly key: string;
}

type Node = ScreenNode | RecordingNode | { readonly kind: 'recordings' };

/** What is known of another window's screen beyond its marker, from its last grab. */
type Reach = 'ok' | 'gone' | 'unreachable';

export class ScreensOverview extends Disposable implements vscode.TreeDataProvider<Node> {
  private readonly changed = this.register(new vscode.EventEmitter<void>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly tree: vscode.TreeView<Node>;
  private readonly scheduler = this.register(new ThumbnailScheduler<Thumbnail>({ intervalMs: REFRESH_MS, same: sameThumbnail }));
  private readonly ownKey: string;
  private screens: ListedScreen[] = [];
  /** The recordings of screens that no longer run, read by `refresh` (only while the tree shows). */
  private readonly stoppedRecordings: StoppedRecordings;
  private recordings: RecordingSummary[] = [];
  private readonly thumbnails = new Map<string, Thumbnail>();
  /** By workspace key, for the screen that started at `startedAt` (a new start forgets it). */
  private readonly reach = new Map<string, { readonly startedAt: string; readonly reach: Reach }>();
  /** Other windows' sandboxes, made from their markers once per screen (key and start time). */
  private readonly sandboxes = new Map<string, { readonly startedAt: string; readonly backend: SandboxBackend; readonly sandbox: Sandbox }>();
  private readonly backends = new SandboxBackends();
  private refreshTimer: NodeJS.Timeout | undefined;
  /** What the last refresh listed (JSON), to tell the timer's re-reads that changed nothing. */
  private listing = '';

  constructor(private readonly ctx: Ctx) {
    super();
    this.ownKey = ctx.control.store.key;
    this.stoppedRecordings = new StoppedRecordings(ctx.recordings.root);
    this.recordWorkspace();
    this.tree = this.register(vscode.window.createTreeView(SCREENS_VIEW_ID, { treeDataProvider: this, showCollapseAll: false }));
    this.register(this.tree.onDidChangeVisibility(() => this.visibilityChanged()));
    this.register(this.scheduler.onResult((key, outcome) => void this.grabbed(key, outcome)));
    // Listing reads every window's markers, leases and viewer records: only while the tree shows
    // (showing it lists again); hidden, the status bar's thumbnail still follows this screen.
    this.register(ctx.controller.onStatus(() => (this.refreshTimer !== undefined ? this.refresh() : this.showOwnThumbnail())));
    this.register(ctx.control.onDidChange(() => this.changed.fire()));
    this.register(ctx.recordings.onDidDelete(() => this.refreshTimer !== undefined && this.refresh()));
    this.register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.visibilityChanged()));
    this.register(vscode.commands.registerCommand('botScreen.screens.open', (node?: ScreenNode) => this.open(node)));
    this.register(toDisposable(() => clearInterval(this.refreshTimer)));
    this.visibilityChanged();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'recordings') {
      const group = new vscode.TreeItem(vscode.l10n.t('Recordings'), vscode.TreeItemCollapsibleState.Expanded);
      group.id = 'botScreen.recordings';
      group.iconPath = new vscode.ThemeIcon('history');
      group.tooltip = vscode.l10n.t('Recordings of screens that no longer run, kept on this machine until you delete them.');
      return group;
    }
    if (node.kind === 'recording') {
      return this.recordingItem(node);
    }
    const listed = this.screens.find((s) => s.key === node.key);
    const marker = listed?.marker;
    const state = this.stateOf(node, listed);
    const name = node.own ? (vscode.workspace.name ?? node.key) : (listed?.workspace?.name ?? node.key);
    const item = new vscode.TreeItem(node.own ? vscode.l10n.t('{0} (this window)', name) : name);
    item.id = node.key;
    const where = this.whereOf(node, marker);
    const control = this.controlOf(node, listed);
    item.description = [where, state.label, control].filter(Boolean).join(' · ');
    item.contextValue = `botScreen.screen.${node.own ? 'own' : 'other'}.${state.key}`;
    const thumbnail = this.thumbnails.get(node.key);
    item.iconPath = thumbnail
      ? vscode.Uri.parse(jpegDataUri(thumbnail.icon))
      : new vscode.ThemeIcon(state.key === 'starting' || state.key === 'stopping' ? 'loading~spin' : state.key === 'running' ? 'vm' : 'vm-outline');
    item.command = { command: 'botScreen.screens.open', title: vscode.l10n.t('Open Screen'), arguments: [node] };
    item.tooltip = this.tooltipOf(item.label as string, [where, state.label, control, this.viewersOf(listed)], marker, thumbnail);
    item.accessibilityInformation = { label: [item.label, item.description].join(', ') };
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (node?.kind === 'recordings') {
      return this.stoppedScreensRecordings().map((r) => ({ kind: 'recording', key: r.screenId }));
    }
    if (node) {
      return [];
    }
    const screens = this.screenNodes();
    return this.stoppedScreensRecordings().length > 0 ? [...screens, { kind: 'recordings' }] : screens;
  }

  private screenNodes(): ScreenNode[] {
    const nodes = this.screens.map((s): ScreenNode => ({ kind: 'screen', key: s.key, own: s.key === this.ownKey }));
    // This window's screen is listed while it starts or stops too (its marker comes with the start).
    const own = this.ctx.controller.status.state;
    if (!nodes.some((n) => n.own) && (own === 'starting' || own === 'stopping' || own === 'running' || own === 'gone')) {
      nodes.unshift({ kind: 'screen', key: this.ownKey, own: true });
    }
    return nodes;
  }

  /** The recordings last read whose screen is not listed above (its row offers Open Recording itself). */
  private stoppedScreensRecordings(): RecordingSummary[] {
    const listed = new Set(this.screenNodes().map((n) => n.key));
    return this.recordings.filter((r) => !listed.has(r.screenId));
  }

  private recordingItem(node: RecordingNode): vscode.TreeItem {
    const summary = this.recordings.find((r) => r.screenId === node.key);
    const name = this.ctx.recordings.nameOf(node.key);
    const item = new vscode.TreeItem(name);
    item.id = `botScreen.recording.${node.key}`;
    item.description = summary ? recordingSpan(summary) : '';
    item.contextValue = 'botScreen.recording';
    item.iconPath = new vscode.ThemeIcon('play-circle');
    item.command = { command: 'botScreen.openRecording', title: vscode.l10n.t('Open Recording'), arguments: [node] };
    const tooltip = new vscode.MarkdownString('', true);
    tooltip.appendMarkdown('**');
    tooltip.appendText(vscode.l10n.t('Recording of {0}', name));
    tooltip.appendMarkdown('**\n\n');
    tooltip.appendText(
      summary ? vscode.l10n.t('{0}; {1} segment files. Its screen no longer runs. Click to replay it.', item.description, summary.segments.length) : '',
    );
    item.tooltip = tooltip;
    item.accessibilityInformation = { label: [vscode.l10n.t('Recording of {0}', name), item.description].join(', ') };
    return item;
  }

  /** The Screens view was shown or hidden: grabs run only while it is visible (and the workspace trusted). */
  private visibilityChanged(): void {
    const active = this.tree.visible && vscode.workspace.isTrusted;
    clearInterval(this.refreshTimer);
    this.refreshTimer = undefined;
    if (active) {
      this.refresh();
      this.refreshTimer = setInterval(() => this.refresh(false), REFRESH_MS);
    }
    this.scheduler.setVisible(active);
  }

  /**
   * Re-reads the markers (files only) and hands the running screens to the scheduler. The tree is
   * redrawn when something else changed (`force`), or when the listing differs from the last one:
   * the timer's re-read of an unchanged listing sends VS Code nothing.
   */
  private refresh(force = true): void {
    try {
      this.screens = listScreens({ markers: this.ctx.markers, leasesDir: this.ctx.control.store.dir, workspaces: this.ctx.workspaces });
    } catch (err) {
      this.ctx.log.warn(`Screens: could not list the screens: ${String(err)}`);
    }
    try {
      this.recordings = this.stoppedRecordings.list(new Set(this.screenNodes().map((n) => n.key)));
    } catch (err) {
      this.ctx.log.warn(`Screens: could not list the recordings: ${String(err)}`);
    }
    const targets = new Map<string, () => Promise<Thumbnail>>();
    for (const listed of this.screens) {
      const own = listed.key === this.ownKey;
      if (this.reach.get(listed.key)?.startedAt !== listed.marker.startedAt) {
        this.reach.delete(listed.key);
      }
      if (own ? this.ctx.controller.status.state === 'running' : this.reach.get(listed.key)?.reach !== 'gone') {
        targets.set(`${listed.key}/${listed.marker.startedAt}`, () => this.grab(listed.marker, own));
      }
    }
    this.scheduler.setTargets(targets);
    for (const key of [...this.thumbnails.keys()]) {
      if (!this.screens.some((s) => s.key === key)) {
        this.thumbnails.delete(key);
        this.reach.delete(key);
        this.sandboxes.delete(key);
      }
    }
    const listing = JSON.stringify([this.screens, this.recordings]);
    if (force || listing !== this.listing) {
      this.listing = listing;
      this.changed.fire();
    }
    this.showOwnThumbnail();
  }

  private async grab(marker: Marker, own: boolean): Promise<Thumbnail> {
    if (own) {
      const running = this.ctx.controller.runningSandbox();
      if (!running) {
        throw new ThumbnailError(undefined, 'the screen is not running');
      }
      return grabThumbnail(running.sandbox, displayEnv(running.screen));
    }
    const { sandbox } = await this.sandboxOf(marker);
    return grabThumbnail(sandbox, markerDisplayEnv(marker));
  }

  /** Another window's sandbox, from its marker, with this user's backend settings (never the workspace's). */
  private async sandboxOf(marker: Marker): Promise<{ readonly backend: SandboxBackend; readonly sandbox: Sandbox }> {
    const kept = this.sandboxes.get(marker.workspaceKey);
    if (kept?.startedAt === marker.startedAt) {
      return kept;
    }
    const settings = { ...readSettings(this.ctx.log), workspaceKey: marker.workspaceKey };
    const backend = this.backends.backendFor(marker.placement, settings, this.ctx.log);
    if (!backend) {
      throw new ThumbnailError(undefined, `no backend here for ${JSON.stringify(marker.placement)}`);
    }
    const made = { startedAt: marker.startedAt, backend, sandbox: await backend.fromIdentity(marker.sandbox) };
    this.sandboxes.set(marker.workspaceKey, made);
    return made;
  }

  private async grabbed(target: string, outcome: { ok: true; value: Thumbnail } | { ok: false; error: unknown; failures: number }): Promise<void> {
    const key = target.slice(0, target.indexOf('/'));
    const startedAt = target.slice(target.indexOf('/') + 1);
    if (outcome.ok) {
      this.thumbnails.set(key, outcome.value);
      this.reach.set(key, { startedAt, reach: 'ok' });
      this.ctx.log.debug(`Screens: thumbnail of ${key}: ${outcome.value.jpeg.length} bytes JPEG, ${outcome.value.wireBytes} bytes from the sandbox, ${outcome.value.ms} ms`);
    } else {
      this.ctx.log.debug(`Screens: no thumbnail of ${key} (failure ${outcome.failures}): ${String(outcome.error)}`);
      const kept = this.sandboxes.get(key);
      if (key !== this.ownKey && outcome.failures === 1) {
        // Another window's sandbox that stopped answering: gone for good, or only unreachable now.
        const liveness = kept ? await kept.backend.liveness(kept.sandbox).catch(() => 'unknown' as const) : 'unknown';
        this.reach.set(key, { startedAt, reach: liveness === 'gone' ? 'gone' : 'unreachable' });
        if (liveness === 'gone') {
          this.thumbnails.delete(key);
          this.refresh();
        }
      }
    }
    this.changed.fire();
    if (key === this.ownKey) {
      this.showOwnThumbnail();
    }
  }

  private showOwnThumbnail(): void {
    const thumbnail = this.ctx.controller.status.state === 'running' ? this.thumbnails.get(this.ownKey) : undefined;
    this.ctx.statusBar.showThumbnail(
      thumbnail && { uri: jpegDataUri(thumbnail.jpeg), caption: vscode.l10n.t('Thumbnail taken at {0}', new Date(thumbnail.at).toLocaleTimeString()) },
    );
  }

  private stateOf(node: ScreenNode, listed: ListedScreen | undefined): { readonly key: ScreenState | 'unreachable'; readonly label: string } {
    if (node.own) {
      const state = this.ctx.controller.status.state;
      return { key: state, label: stateLabel(state) };
    }
    const reach = this.reach.get(node.key)?.reach;
    if (reach === 'gone') {
      return { key: 'gone', label: stateLabel('gone') };
    }
    if (reach === 'unreachable' || !listed) {
      return { key: 'unreachable', label: vscode.l10n.t('not answering') };
    }
    return { key: 'running', label: stateLabel('running') };
  }

  private whereOf(node: ScreenNode, marker: Marker | undefined): string {
    const placement = marker?.placement ?? (node.own ? this.ctx.controller.status.placement : undefined);
    if (!placement) {
      return '';
    }
    if (placement.where === 'host') {
      return hostShortName();
    }
    const sandbox = marker?.sandbox.name ?? this.ctx.controller.status.sandbox?.name;
    return sandbox ? `${placement.backend}: ${sandbox}` : placement.backend;
  }

  private controlOf(node: ScreenNode, listed: ListedScreen | undefined): string {
    if (node.own) {
      if (!this.ctx.control.humanHolds()) {
        return vscode.l10n.t('the agent has control');
      }
      return this.ctx.views.viewers().some((viewer) => viewer.holdsControl()) ? vscode.l10n.t('you have control') : vscode.l10n.t('another viewer has control');
    }
    if (!listed) {
      return '';
    }
    return listed.holder === 'human' ? vscode.l10n.t('a person has control') : vscode.l10n.t('the agent has control');
  }

  private viewersOf(listed: ListedScreen | undefined): string {
    return listed ? viewersLabel(listed.viewers) : '';
  }

  private tooltipOf(title: string, facts: readonly string[], marker: Marker | undefined, thumbnail: Thumbnail | undefined): vscode.MarkdownString {
    const tooltip = new vscode.MarkdownString('', true);
    tooltip.appendMarkdown('**');
    tooltip.appendText(title);
    tooltip.appendMarkdown('**\n\n');
    tooltip.appendText(facts.filter(Boolean).join(' · '));
    if (marker) {
      tooltip.appendMarkdown('\n\n');
      tooltip.appendText(vscode.l10n.t('Display {0}, {1}.', marker.display, marker.geometry));
    }
    if (thumbnail) {
      tooltip.appendMarkdown(`\n\n![${vscode.l10n.t('Thumbnail of the screen')}](${jpegDataUri(thumbnail.jpeg)})\n\n`);
      tooltip.appendText(vscode.l10n.t('Thumbnail taken at {0}', new Date(thumbnail.at).toLocaleTimeString()));
    }
    return tooltip;
  }

  private async open(node: ScreenNode | undefined): Promise<void> {
    if (!node || node.own) {
      await vscode.commands.executeCommand('botScreen.openInEditor');
      return;
    }
    const workspace = this.screens.find((s) => s.key === node.key)?.workspace;
    const name = workspace?.name ?? node.key;
    const message = vscode.l10n.t(
      'This screen belongs to the window of {0}. A screen is shown and controlled only in the window that started it.',
      name,
    );
    const switchTo = vscode.l10n.t('Switch to That Window');
    const answer = await vscode.window.showInformationMessage(message, ...(workspace ? [switchTo] : []));
    if (answer === switchTo && workspace) {
      // A workspace some window shows: VS Code focuses that window. One whose window was closed
      // (its screen outlives it) opens in a new window, which attaches to the screen; never this one.
      await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.parse(workspace.uri), { forceNewWindow: true });
    }
  }

  /** Names this window's workspace for the other windows' trees (a file in the global storage). */
  private recordWorkspace(): void {
    const uri = vscode.workspace.workspaceFile ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!uri || !vscode.workspace.name) {
      return;
    }
    try {
      this.ctx.workspaces.write(this.ownKey, { name: vscode.workspace.name, uri: uri.toString() });
    } catch (err) {
      this.ctx.log.warn(`Screens: could not record this workspace's name: ${String(err)}`);
    }
  }
}
