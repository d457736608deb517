/** `bot-screen_type`: types text into whatever has the keyboard focus; asks the person first. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import { CONFIRM_TEXT_MAX, markdownCodeBlock, showText } from '../../core/toolMessages';
import { AgentTool, inline, markdown } from './agentTool';

export class TypeTool extends AgentTool<'type'> {
  static readonly id = 'bot-screen_type';
  readonly kind = 'type';

  invocationMessage(action: ActionOf<'type'> | undefined): string | vscode.MarkdownString {
    return action
      ? markdown(vscode.l10n.t('Typing {0} ({1} characters) on the Bot Screen', inline(action.text), Array.from(action.text).length))
      : vscode.l10n.t('Typing on the Bot Screen');
  }

  override confirmationMessages(action: ActionOf<'type'>): vscode.LanguageModelToolConfirmationMessages {
    const shown = showText(action.text, CONFIRM_TEXT_MAX);
    const lines = [
      vscode.l10n.t('The agent wants to type this text ({0} characters) into whatever has the keyboard focus on the Bot Screen:', shown.total),
      '',
      markdownCodeBlock(shown.shown),
    ];
    if (shown.truncated) {
      lines.push('', vscode.l10n.t('Only the first {0} of {1} characters are shown.', CONFIRM_TEXT_MAX, shown.total));
    }
    return { title: vscode.l10n.t('Type on the Bot Screen?'), message: markdown(lines.join('\n')) };
  }

  doneMessage(action: ActionOf<'type'>): string {
    return vscode.l10n.t('Typed {0} characters.', Array.from(action.text).length);
  }
}
