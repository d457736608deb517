/** `bot-screen_key`: presses one key chord (e.g. ctrl+shift+t); asks the person first. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import { CONFIRM_TEXT_MAX, markdownCodeSpan, showText } from '../../core/toolMessages';
import { AgentTool, inline, markdown } from './agentTool';

export class KeyTool extends AgentTool<'key'> {
  static readonly id = 'bot-screen_key';
  readonly kind = 'key';

  invocationMessage(action: ActionOf<'key'> | undefined): string | vscode.MarkdownString {
    return action ? markdown(vscode.l10n.t('Pressing {0} on the Bot Screen', inline(action.chord))) : vscode.l10n.t('Pressing keys on the Bot Screen');
  }

  override confirmationMessages(action: ActionOf<'key'>): vscode.LanguageModelToolConfirmationMessages {
    return {
      title: vscode.l10n.t('Press keys on the Bot Screen?'),
      message: markdown(vscode.l10n.t('The agent wants to press {0} on the Bot Screen.', markdownCodeSpan(showText(action.chord, CONFIRM_TEXT_MAX, true).shown))),
    };
  }

  doneMessage(action: ActionOf<'key'>): string {
    return vscode.l10n.t('Pressed {0}.', action.chord);
  }
}
