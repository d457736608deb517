// The Open Recording editor panel: the replay webview (webview/replay.ts) of one screen's
// recording or of an exported recording file, and where its exports are saved. A screen's
// recording still being written is followed while the panel is visible (followRecording: file
// events, at most once a second): what its files gain is sent to the replay, which grows its
// timeline.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Logger } from './core/logger';
import { exportRecording, followRecording, recordingOf, type RecordingFollow, type RecordingSummary } from './core/recorderStore';
import type { ReplayHostMessage, ReplayWebviewMessage } from './replayProtocol';
import { webviewPage } from './webviewHtml';

/**
 * What a panel replays: a screen's ring buffer (its segment files; `live` while a recorder may
 * still write it), or one exported file.
 */
export type ReplaySource =
  | { readonly kind: 'screen'; readonly summary: RecordingSummary; readonly live?: boolean }
  | { readonly kind: 'file'; readonly file: string };

/** The open panels, newest last: tests and commands reach them. */
const panels = new Set<RecordingPanel>();

export class RecordingPanel {
  private readonly panel: vscode.WebviewPanel;
  private readonly videoWaiters: ((file: string | undefined) => void)[] = [];
  /** A target chosen before the export (the command's argument): no save dialog then. */
  private videoTarget: vscode.Uri | undefined;
  /** Following a live recording (src/core/recorderStore.ts). */
  private following: RecordingFollow | undefined;

  static latest(): RecordingPanel | undefined {
    return [...panels].pop();
  }

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly source: ReplaySource,
    private readonly log: Logger,
  ) {
    const files = source.kind === 'screen' ? source.summary.segments.map((s) => s.path) : [source.file];
    const roots = [...new Set(files.map((file) => path.dirname(file)))].map((dir) => vscode.Uri.file(dir));
    this.panel = vscode.window.createWebviewPanel(
      'botScreen.replay',
      vscode.l10n.t('Recording: {0}', source.kind === 'screen' ? new Date(source.summary.startedAt).toLocaleString() : path.basename(source.file)),
      vscode.ViewColumn.Active,
      {
        enableScripts: true,
        retainContextWhenHidden: true,
        localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media'), ...roots],
      },
    );
    panels.add(this);
    this.panel.onDidDispose(() => {
      panels.delete(this);
      this.following?.dispose();
      this.videoWaiters.splice(0).forEach((resolve) => resolve(undefined));
    });
    const webview = this.panel.webview;
    webview.html = this.html(webview);
    webview.onDidReceiveMessage((message: ReplayWebviewMessage) => {
      if (message.type === 'ready') {
        void this.post({
          type: 'load',
          files: files.map((file) => ({ name: path.basename(file), url: webview.asWebviewUri(vscode.Uri.file(file)).toString() })),
          live: source.kind === 'screen' && source.live === true,
          strings: {
            play: vscode.l10n.t('Play'),
            pause: vscode.l10n.t('Pause'),
            empty: vscode.l10n.t('Nothing of this recording can be read any more.'),
            exporting: vscode.l10n.t('Recording the video while it plays…'),
          },
        });
      } else if (message.type === 'loaded' && source.kind === 'screen' && !this.following) {
        this.follow(source.summary.dir, message.files);
      } else if (message.type === 'exportRaw') {
        void this.exportRaw();
      } else if (message.type === 'video') {
        void this.saveVideo(message.data, message.durationMs);
      }
    });
  }

  /** Sends the replay what the recording gains while the panel is visible (hidden, it catches up when shown). */
  private follow(dir: string, known: readonly { readonly name: string; readonly bytes: number }[]): void {
    this.following = followRecording(
      dir,
      known,
      ({ appended, dropped }) => {
        for (const { name, bytes } of appended) {
          void this.post({ type: 'append', name, bytes });
        }
        if (dropped.length > 0) {
          void this.post({ type: 'dropped', names: dropped });
        }
      },
      { visible: () => this.panel.visible },
    );
    this.panel.onDidChangeViewState(() => this.following?.shown());
  }

  seek(t: number): Thenable<boolean> {
    return this.post({ type: 'seek', t });
  }

  /** Plays from the current position to the end into a WebM; resolves with the file written (undefined: none). */
  exportVideo(target?: vscode.Uri): Promise<string | undefined> {
    this.videoTarget = target;
    const done = new Promise<string | undefined>((resolve) => this.videoWaiters.push(resolve));
    void this.post({ type: 'exportVideo' });
    return done;
  }

  /** Saves the recording as one file in the documented format. */
  exportRaw(target?: vscode.Uri): Promise<string | undefined> {
    return exportRaw(this.source, this.log, target);
  }

  private async saveVideo(data: Uint8Array, durationMs: number): Promise<void> {
    const target =
      this.videoTarget ??
      (await vscode.window.showSaveDialog({
        title: vscode.l10n.t('Export Video'),
        filters: { WebM: ['webm'] },
        defaultUri: vscode.Uri.file(path.join(defaultFolder(), `botscreen-${stamp()}.webm`)),
      }));
    this.videoTarget = undefined;
    let written: string | undefined;
    if (target) {
      try {
        fs.writeFileSync(target.fsPath, data, { mode: 0o600 });
        written = target.fsPath;
        this.log.info(`video exported to ${written} (${data.length} bytes, ${Math.round(durationMs)} ms)`);
      } catch (err) {
        void vscode.window.showErrorMessage(vscode.l10n.t('Cannot export the video to {0}: {1}', target.fsPath, String(err)));
      }
    }
    this.videoWaiters.splice(0).forEach((resolve) => resolve(written));
  }

  private post(message: ReplayHostMessage): Thenable<boolean> {
    return this.panel.webview.postMessage(message);
  }

  private html(webview: vscode.Webview): string {
    return webviewPage(webview, this.extensionUri, {
      script: 'replay.js',
      styles: ['replay.css'],
      title: vscode.l10n.t('Bot Screen recording'),
      // The recording's own files, read with fetch.
      csp: [`connect-src ${webview.cspSource}`],
      body: `<div class="toolbar">
  <button id="play">${vscode.l10n.t('Play')}</button>
  <label>${vscode.l10n.t('Speed')} <select id="speed"><option value="1">1×</option><option value="2">2×</option><option value="8">8×</option></select></label>
  <button id="next-action">${vscode.l10n.t('Next action')}</button>
  <span class="clock" id="clock">0:00 / 0:00</span>
  <button id="live" hidden>${vscode.l10n.t('Live')}</button>
  <button id="export-video">${vscode.l10n.t('Export Video…')}</button>
  <button id="export-raw">${vscode.l10n.t('Export Recording…')}</button>
  <span class="status" id="status" role="status"></span>
</div>
<div class="timeline">
  <input type="range" id="scrub" min="0" max="0" value="0" step="1" aria-label="${vscode.l10n.t('Position in the recording')}">
  <div class="marks" id="marks"></div>
</div>
<div class="stage"><canvas id="output" width="0" height="0"></canvas></div>
<div class="decoder" id="decoder" aria-hidden="true"></div>
`,
    });
  }
}

/** Saves a recording as one file in the documented format; asks where unless given `target`. */
export async function exportRaw(source: ReplaySource, log: Logger, target?: vscode.Uri): Promise<string | undefined> {
  const chosen =
    target ??
    (await vscode.window.showSaveDialog({
      title: vscode.l10n.t('Export Recording'),
      filters: { [vscode.l10n.t('Bot Screen recording')]: ['bsrec'] },
      defaultUri: vscode.Uri.file(path.join(defaultFolder(), `botscreen-${stamp()}.bsrec`)),
    }));
  if (!chosen) {
    return undefined;
  }
  try {
    if (source.kind === 'screen') {
      // A live recording is exported as it is now, not as it was when its panel opened.
      const now = source.live ? recordingOf(path.dirname(source.summary.dir), source.summary.screenId) : undefined;
      exportRecording(now ?? source.summary, chosen.fsPath);
    } else {
      fs.copyFileSync(source.file, chosen.fsPath);
    }
  } catch (err) {
    void vscode.window.showErrorMessage(vscode.l10n.t('Cannot export the recording to {0}: {1}', chosen.fsPath, String(err)));
    return undefined;
  }
  log.info(`recording exported to ${chosen.fsPath}`);
  return chosen.fsPath;
}

/** Exports are offered outside the workspace: the sandbox (the agent) may see the workspace's files. */
function defaultFolder(): string {
  return os.homedir();
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
}
