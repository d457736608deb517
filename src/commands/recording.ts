// The flight recorder's commands: open a recording (a screen's, or an exported file), export it
// (raw or as video), delete it, pause and resume recording (src/recording.ts).
import * as vscode from 'vscode';
import { isScreenId, listRecordings, recordingOf, type RecordingSummary } from '../core/recorderStore';
import type { Ctx } from '../ctx';
import { recordingSpan } from '../messages';
import { exportRaw, RecordingPanel } from '../recordingPanel';
import type { Command } from './table';

/** A screen id from a command argument: the id itself, or a Screens view item carrying it (`key`). */
function screenIdOf(arg: unknown): string | undefined {
  if (isScreenId(arg)) {
    return arg;
  }
  if (typeof arg === 'object' && arg !== null) {
    const item = arg as { key?: unknown; screenId?: unknown };
    const value = item.key ?? item.screenId;
    return isScreenId(value) ? value : undefined;
  }
  return undefined;
}

function describe(summary: RecordingSummary, ctx: Ctx): vscode.QuickPickItem & { summary: RecordingSummary } {
  return {
    label: ctx.recordings.nameOf(summary.screenId),
    description: recordingSpan(summary),
    summary,
  };
}


/** The recording a command acts on: the argument's, else this window's screen's, else one the user picks. */
async function pickRecording(ctx: Ctx, arg: unknown, title: string): Promise<RecordingSummary | vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) {
    return arg;
  }
  const id = screenIdOf(arg);
  if (id !== undefined) {
    const summary = recordingOf(ctx.recordings.root, id);
    if (!summary) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Nothing is recorded for this screen.'));
    }
    return summary;
  }
  const all = listRecordings(ctx.recordings.root);
  const openFile = { label: vscode.l10n.t('$(folder-opened) Open a recording file…'), summary: undefined };
  const picked = await vscode.window.showQuickPick([...all.map((summary) => describe(summary, ctx)), openFile], { title });
  if (!picked) {
    return undefined;
  }
  if (!picked.summary) {
    const files = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { [vscode.l10n.t('Bot Screen recording')]: ['bsrec'] } });
    return files?.[0];
  }
  return picked.summary;
}

export function recordingCommands(ctx: Ctx): Command[] {
  const open = (picked: RecordingSummary | vscode.Uri) =>
    new RecordingPanel(
      ctx.extension.extensionUri,
      picked instanceof vscode.Uri
        ? { kind: 'file', file: picked.fsPath }
        : { kind: 'screen', summary: picked, live: ctx.recordings.mayBeWriting(picked.screenId) },
      ctx.log,
    );
  return [
    {
      id: 'botScreen.openRecording',
      run: async (arg?: unknown) => {
        const picked = await pickRecording(ctx, arg, vscode.l10n.t('Open Recording'));
        if (picked) {
          open(picked);
        }
      },
    },
    {
      id: 'botScreen.exportRecording',
      // (screen id or tree item, target Uri): without a target the save dialog asks.
      run: async (arg?: unknown, target?: unknown) => {
        const picked = await pickRecording(ctx, arg, vscode.l10n.t('Export Recording'));
        if (picked && !(picked instanceof vscode.Uri)) {
          return exportRaw({ kind: 'screen', summary: picked }, ctx.log, target instanceof vscode.Uri ? target : undefined);
        }
        return undefined;
      },
    },
    {
      id: 'botScreen.exportRecordingVideo',
      // Exports the replay panel shown last, from its position to the end; (target Uri) skips the dialog.
      run: async (target?: unknown) => {
        const panel = RecordingPanel.latest();
        if (!panel) {
          void vscode.window.showInformationMessage(vscode.l10n.t('Open a recording first (Bot Screen: Open Recording).'));
          return undefined;
        }
        return panel.exportVideo(target instanceof vscode.Uri ? target : undefined);
      },
    },
    {
      id: 'botScreen.deleteRecording',
      run: async (arg?: unknown, confirmed?: unknown) => {
        const picked = await pickRecording(ctx, arg, vscode.l10n.t('Delete Recording'));
        if (!picked || picked instanceof vscode.Uri) {
          return false;
        }
        const name = ctx.recordings.nameOf(picked.screenId);
        if (confirmed !== true) {
          const remove = vscode.l10n.t('Delete');
          const answer = await vscode.window.showWarningMessage(
            vscode.l10n.t('Delete the recording of {0}?', name),
            {
              modal: true,
              detail: vscode.l10n.t(
                'Its {0} segment files ({1}) are removed from this machine. It cannot be undone.',
                picked.segments.length,
                recordingSpan(picked),
              ),
            },
            remove,
          );
          if (answer !== remove) {
            return false;
          }
        }
        if ((await ctx.recordings.delete(picked.screenId)) === 'running') {
          // Another window's screen still runs and may be writing it: never pulled from under its recorder.
          void vscode.window.showWarningMessage(
            vscode.l10n.t('The screen of {0} still runs in its window and records there: stop it first, then delete its recording.', name),
          );
          return false;
        }
        return true;
      },
    },
    { id: 'botScreen.pauseRecording', run: () => ctx.recordings.pause() },
    { id: 'botScreen.resumeRecording', run: () => ctx.recordings.resume() },
    {
      id: 'botScreen.toggleRecording',
      run: () => (ctx.recordings.state === 'paused' ? ctx.recordings.resume() : ctx.recordings.pause()),
    },
  ];
}
