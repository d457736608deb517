// The flight recorder in the window: records the running screen (src/core/recorder.ts, in a
// process of its own: src/core/recorderProcess.ts) while
// `botScreen.recorder.enabled`, marks agent actions and control changes on its timeline, and
// shows recording / paused in its own status bar item, which pauses and resumes it.
import * as vscode from 'vscode';
import type { AgentActionRunner } from './core/actions/agentActionRunner';
import type { Lease } from './core/lease';
import { Disposable, toDisposable } from './core/lifecycle';
import type { Logger } from './core/logger';
import { actionEvent } from './core/recorder';
import { RecorderProcess, type RecorderLoss } from './core/recorderProcess';
import type { MarkerStore } from './core/marker';
import { deleteRecording, screenDir } from './core/recorderStore';
import type { TimelineEvent } from './core/recordingFormat';
import type { ScreenController } from './core/screen';
import { screenRuns, type WorkspaceRecords } from './core/screenList';
import type { Control } from './control';
import { userSetting, workspaceKey } from './settings';
import type { ViewerCount } from './viewerCount';

export type RecordingState = 'off' | 'recording' | 'paused';

const PAUSED_KEY = 'botScreen.recorder.paused';
const DEFAULT_MAX_MB = 256;
/** After a recorder process ended on its own, the next one starts this much later (doubling, up to the max). */
const LOST_RETRY_MS = 10_000;
const LOST_RETRY_MAX_MS = 5 * 60_000;

/** The recorder settings, from the user's settings only: a workspace (or the agent) cannot stop the recording or fill the disk. */
function recorderSettings(): { enabled: boolean; maxBytes: number } {
  const mb = userSetting<number>('recorder.maxMB');
  return {
    enabled: userSetting<boolean>('recorder.enabled') !== false,
    maxBytes: Math.max(1, typeof mb === 'number' && Number.isFinite(mb) ? mb : DEFAULT_MAX_MB) * 1024 * 1024,
  };
}

export class Recordings extends Disposable {
  /** Every screen's recordings: `<root>/<screen id>/seg-*.bsrec`. */
  readonly root: string;
  readonly screenId = workspaceKey();
  private recorder: RecorderProcess | undefined;
  /** A recorder's disposal in progress: its files are still being closed. */
  private ending: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;
  /** Recorder processes lost one after the other (the retry waits longer each time). */
  private lostInARow = 0;
  private lasted: NodeJS.Timeout | undefined;
  /** Deletes of this screen's recording in progress: no recorder runs meanwhile. */
  private deleting = 0;
  /** A recorder waits for the last one's process to close its files. */
  private waiting = false;
  /** Why the last recorder was lost or could not start, while none records (cleared when one starts): the status bar says so. */
  private failure: string | undefined;
  /** The running recorder's segments do not reach the disk: why (it retries on its own). */
  private writeTrouble: string | undefined;
  private readonly changed = this.register(new vscode.EventEmitter<RecordingState>());
  readonly onDidChange = this.changed.event;
  private readonly item = this.register(vscode.window.createStatusBarItem('botScreen.recorder', vscode.StatusBarAlignment.Left, 49));
  private readonly deleted = this.register(new vscode.EventEmitter<string>());
  /** A screen's recording was deleted (its screen id): the Screens view lists recordings. */
  readonly onDidDelete = this.deleted.event;

  constructor(
    private readonly extension: vscode.ExtensionContext,
    private readonly controller: ScreenController,
    control: Control,
    private readonly viewers: ViewerCount,
    private readonly log: Logger,
    /** Every window's screen markers: whose screen still runs. */
    private readonly markers: MarkerStore,
    private readonly workspaces: WorkspaceRecords,
  ) {
    super();
    this.root = vscode.Uri.joinPath(extension.globalStorageUri, 'recordings').fsPath;
    this.item.name = vscode.l10n.t('Bot Screen recorder');
    this.item.command = 'botScreen.toggleRecording';
    this.register(controller.onStatus(() => this.follow()));
    this.register(control.onDidChange((lease) => this.event(controlEvent(lease))));
    this.register(viewers.onDidChange((count) => this.recorder?.setWatched(count > 0)));
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('botScreen.recorder')) {
          this.restart();
        }
      }),
    );
    this.register(
      toDisposable(() => {
        clearTimeout(this.retry);
        clearTimeout(this.lasted);
        this.stopRecorder();
      }),
    );
    this.follow();
  }

  get state(): RecordingState {
    if (!recorderSettings().enabled || this.controller.status.state !== 'running') {
      return 'off';
    }
    return this.paused ? 'paused' : 'recording';
  }

  /** Puts agent actions on the timeline. */
  watchActions(runner: AgentActionRunner): void {
    this.register(runner.onDidPerform((action, result) => result.status === 'done' && this.event(actionEvent(action))));
  }

  pause(): void {
    void this.extension.workspaceState.update(PAUSED_KEY, true);
    this.stopRecorder();
    this.log.info('recorder paused');
    this.render();
  }

  resume(): void {
    void this.extension.workspaceState.update(PAUSED_KEY, false);
    this.log.info('recorder resumed');
    this.follow();
  }

  /** Stops writing this screen's recording while `work` runs (a delete), then goes on. */
  private async withoutRecorder<T>(work: () => T | Promise<T>): Promise<T> {
    this.deleting++;
    clearTimeout(this.retry);
    this.stopRecorder();
    try {
      // Its process closes its files and exits first: nothing writes while they go.
      await this.ending;
      return await work();
    } finally {
      this.deleting--;
      this.follow();
    }
  }

  /**
   * Deletes a screen's recording. This window's: its recorder stops while the files go, then
   * goes on. Another window's screen that still runs may be writing its recording right now:
   * refused ('running'), nothing is removed.
   */
  async delete(screenId: string): Promise<'deleted' | 'running'> {
    if (screenId === this.screenId) {
      await this.withoutRecorder(() => deleteRecording(this.root, screenId));
    } else if (screenRuns(this.markers, screenId)) {
      return 'running';
    } else {
      deleteRecording(this.root, screenId);
    }
    this.log.info(`recording of screen ${screenId} deleted`);
    this.deleted.fire(screenId);
    return 'deleted';
  }

  /** What a person calls a screen's recording: this workspace's, or the workspace whose window recorded it. */
  /** Whether a recorder may be writing the screen's recording now: this window's, or another window's screen still runs. */
  mayBeWriting(screenId: string): boolean {
    return screenId === this.screenId ? this.state === 'recording' : screenRuns(this.markers, screenId);
  }

  nameOf(screenId: string): string {
    if (screenId === this.screenId) {
      return vscode.l10n.t('This workspace\'s screen');
    }
    return this.workspaces.read(screenId)?.name ?? screenId;
  }

  /** The directory of this window's screen's recording. */
  dir(): string {
    return screenDir(this.root, this.screenId);
  }

  private get paused(): boolean {
    return this.extension.workspaceState.get<boolean>(PAUSED_KEY) === true;
  }

  private event(event: TimelineEvent): void {
    this.recorder?.event(event);
  }

  private restart(): void {
    this.stopRecorder();
    this.follow();
  }

  /** Records while the screen runs, the setting allows it and nobody paused it; else nothing runs. */
  private follow(): void {
    const state = this.state;
    if (state !== 'recording' || this.deleting > 0) {
      // Paused or off (or its files being deleted): no process, no connection, nothing written.
      this.stopRecorder();
    } else if (!this.recorder && !this.waiting) {
      // A recorder that was just stopped (a pause and a resume) closes its files first: two
      // processes never write one directory.
      this.waiting = true;
      void this.ending.then(() => {
        this.waiting = false;
        if (!this.isDisposed && !this.recorder && this.deleting === 0 && this.state === 'recording') {
          this.recorder = this.startRecorder();
          this.render();
        }
      });
    }
    this.render(state);
  }

  private startRecorder(): RecorderProcess | undefined {
    const { maxBytes } = recorderSettings();
    try {
      const relay = this.controller.relayCommand({ mux: true });
      const recorder: RecorderProcess = new RecorderProcess(
        {
          script: vscode.Uri.joinPath(this.extension.extensionUri, 'dist', 'recorder.js').fsPath,
          log: this.log,
          relayExited: relay.exited,
          unreachable: () => this.controller.relayUnreachable(),
          writeTrouble: (why) => {
            if (this.recorder === recorder) {
              this.writeTrouble = why;
              this.render();
            }
          },
          lost: (_why, loss) => {
            if (this.recorder === recorder) {
              this.recorder = undefined;
              this.retryLater(lossText(loss));
            }
          },
        },
        { dir: this.dir(), screenId: this.screenId, maxBytes, command: relay.command, watched: this.viewers.current > 0 },
      );
      recorder.start();
      this.failure = undefined;
      this.writeTrouble = undefined;
      // A recorder that lasted a while was not lost in a row with the one before.
      clearTimeout(this.lasted);
      this.lasted = setTimeout(() => this.recorder === recorder && (this.lostInARow = 0), LOST_RETRY_MAX_MS);
      return recorder;
    } catch (err) {
      this.log.warn(`recorder cannot start: ${String(err)}`);
      this.retryLater(vscode.l10n.t('it cannot start: {0}', err instanceof Error ? err.message : String(err)));
      return undefined;
    }
  }

  /**
   * No recorder records (`reason`): another is tried after a while, not at once, and less often
   * each time in a row (one that cannot write would only end again); the item says so meanwhile.
   */
  private retryLater(reason: string): void {
    clearTimeout(this.retry);
    const wait = Math.min(LOST_RETRY_MS * 2 ** this.lostInARow++, LOST_RETRY_MAX_MS);
    this.log.warn(`recorder: starting a new one in ${wait / 1000} s`);
    this.retry = setTimeout(() => !this.isDisposed && this.follow(), wait);
    this.failure = vscode.l10n.t('{0}; a new one starts in {1} s', reason, wait / 1000);
    this.render();
  }

  private stopRecorder(): void {
    this.failure = undefined;
    this.writeTrouble = undefined;
    if (this.recorder) {
      this.ending = Promise.all([this.ending, this.recorder.dispose()]).then(() => undefined);
      this.recorder = undefined;
    }
  }

  private render(state = this.state): void {
    void vscode.commands.executeCommand('setContext', 'botScreen.recorder', state);
    this.changed.fire(state);
    if (state === 'off') {
      this.item.hide();
      return;
    }
    const failure = this.failure ?? (this.writeTrouble && vscode.l10n.t('it cannot write its files ({0}); it tries again every few seconds', this.writeTrouble));
    if (state === 'recording' && failure) {
      // Not a REC that records nothing: the person sees the recorder is not writing, and why.
      this.item.text = `$(warning) ${vscode.l10n.t('REC')}`;
      this.item.tooltip = vscode.l10n.t('The Bot Screen recorder is not recording: {0}. Click to pause it.', failure);
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    } else if (state === 'recording') {
      this.item.text = `$(record) ${vscode.l10n.t('REC')}`;
      this.item.tooltip = vscode.l10n.t('Bot Screen records this screen into this machine\'s extension storage (nothing leaves it unless you export). Click to pause.');
      this.item.backgroundColor = undefined;
    } else {
      this.item.text = `$(debug-pause) ${vscode.l10n.t('Recording paused')}`;
      this.item.tooltip = vscode.l10n.t('The Bot Screen recorder is paused: nothing is written. Click to resume.');
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    }
    this.item.accessibilityInformation = { label: String(this.item.tooltip) };
    this.item.show();
  }
}

/** Why a recorder process is gone, in the person's words. */
function lossText(loss: RecorderLoss): string {
  if (loss.failure) {
    return vscode.l10n.t('it cannot record: {0}', loss.failure);
  }
  if (loss.spawnError) {
    return vscode.l10n.t('its process could not start: {0}', loss.spawnError);
  }
  return vscode.l10n.t('its process ended ({0})', loss.signal ?? vscode.l10n.t('exit code {0}', String(loss.code)));
}

function controlEvent(lease: Lease): TimelineEvent {
  const label = lease.holder === 'human' ? vscode.l10n.t('A person took control') : vscode.l10n.t('Control handed back to the agent');
  return { kind: 'control', what: lease.holder, label };
}
