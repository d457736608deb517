/**
 * What the workspace may not decide, on the VS Code side: the modal that answers a start's
 * questions (core/consent.ts) for a person, the SSH hosts they approved (global state, so one
 * yes holds in every window), and the notice that a workspace value of a user-only setting is
 * ignored.
 */
import * as vscode from 'vscode';
import type { ConsentAnswer, HostMemory, StartQuestion } from './core/consent';
import { ignoredWorkspaceSettings } from './settings';

const APPROVED_HOSTS_KEY = 'botScreen.approvedSshHosts';

/** SSH hosts named by a workspace that the user approved, in the extension's global state. */
export function approvedHosts(state: vscode.Memento): HostMemory {
  const list = () => state.get<string[]>(APPROVED_HOSTS_KEY, []);
  return {
    has: (host) => list().includes(host),
    add: async (host) => {
      if (!list().includes(host)) {
        await state.update(APPROVED_HOSTS_KEY, [...list(), host]);
      }
    },
  };
}

/** A person's answer to a start's question: a modal that names what is removed or where it runs. */
export async function askPerson(question: StartQuestion): Promise<ConsentAnswer> {
  if (question.kind === 'replaceContainer') {
    const replace = vscode.l10n.t('Replace Container');
    const keep = vscode.l10n.t('Keep Current Container');
    const answer = await modal(
      vscode.l10n.t('Replace the sandbox container {0}?', question.container),
      vscode.l10n.t(
        'The workspace settings ask for the image {0}, but the container {1} runs {2}. Replacing removes {1}: what was installed inside it is lost (folders mounted into it stay). Keep starts the screen in the current container.',
        question.image,
        question.container,
        question.currentImage,
      ),
      replace,
      keep,
    );
    return answer === replace ? 'yes' : answer === keep ? 'keep' : 'cancel';
  }
  const run = vscode.l10n.t('Run on This Host');
  const answer = await modal(
    vscode.l10n.t('Run the screen on {0}?', question.host),
    vscode.l10n.t(
      'The workspace settings name the SSH host {0}, which you have not used with Bot Screen before. The screen (a desktop the agent acts on) will run there as your login user. Your answer is remembered for this host.',
      question.host,
    ),
    run,
  );
  return answer === run ? 'yes' : 'cancel';
}

/** A modal warning; closing it (or Cancel) answers undefined. */
function modal(message: string, detail: string, ...buttons: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, { modal: true, detail }, ...buttons);
}

/**
 * Tells the user, once per setting and window, that a workspace value of a user-only setting is
 * ignored, naming the settings and the file, with a button to the user settings. One notice for
 * all of them: a workspace that sets four of them gets one toast, not four.
 */
export class IgnoredSettingsNotice {
  private readonly told = new Set<string>();

  constructor(private readonly log: vscode.LogOutputChannel) {}

  check(): void {
    const fresh = ignoredWorkspaceSettings().filter(({ id }) => !this.told.has(id));
    if (fresh.length === 0) {
      return;
    }
    for (const { id, file } of fresh) {
      this.told.add(id);
      this.log.warn(`ignoring "${id}" from the workspace settings ${file}: it is read from the user settings only`);
    }
    const ids = fresh.map(({ id }) => `"${id}"`).join(', ');
    const files = [...new Set(fresh.map(({ file }) => file))].join(', ');
    const open = vscode.l10n.t('Open User Settings');
    const message =
      fresh.length === 1
        ? vscode.l10n.t('Bot Screen ignores {0} in the workspace settings ({1}): it decides what runs on this machine, so only your user settings can set it.', ids, files)
        : vscode.l10n.t('Bot Screen ignores {0} in the workspace settings ({1}): they decide what runs on this machine, so only your user settings can set them.', ids, files);
    void vscode.window.showWarningMessage(message, open).then((answer) => {
      if (answer === open) {
        const query = fresh.length === 1 ? `@id:${fresh[0].id}` : '@ext:botscreen.bot-screen';
        void vscode.commands.executeCommand('workbench.action.openSettings', query);
      }
    });
  }
}
