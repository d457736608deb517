/** `bot-screen_open_url`: opens an http(s) address in the browser on the screen; asks the person first. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import { CONFIRM_TEXT_MAX, markdownCodeBlock, markdownCodeSpan, showText, urlFacts } from '../../core/toolMessages';
import { AgentTool, inline, markdown } from './agentTool';

export class OpenUrlTool extends AgentTool<'openUrl'> {
  static readonly id = 'bot-screen_open_url';
  readonly kind = 'openUrl';

  invocationMessage(action: ActionOf<'openUrl'> | undefined): string | vscode.MarkdownString {
    return action ? markdown(vscode.l10n.t('Opening {0} on the Bot Screen', inline(action.url))) : vscode.l10n.t('Opening a URL on the Bot Screen');
  }

  override confirmationMessages(action: ActionOf<'openUrl'>): vscode.LanguageModelToolConfirmationMessages {
    // An http(s) URL of at most 8192 characters: shown whole, since any part of it may matter.
    const facts = urlFacts(action.url);
    const lines = [
      vscode.l10n.t('The agent wants to open this address in the browser on the Bot Screen:'),
      '',
      markdownCodeBlock(showText(action.url, Number.POSITIVE_INFINITY, true).shown),
    ];
    if (facts) {
      lines.push('', vscode.l10n.t('Site: {0}', markdownCodeSpan(showText(facts.host, CONFIRM_TEXT_MAX, true).shown)));
      if (facts.insecure) {
        lines.push('', vscode.l10n.t('The address is plain http: the page travels unencrypted.'));
      }
    }
    return { title: vscode.l10n.t('Open a web page on the Bot Screen?'), message: markdown(lines.join('\n')) };
  }

  doneMessage(action: ActionOf<'openUrl'>): string {
    return vscode.l10n.t('Opened {0} in the browser on the screen. Take a screenshot to see the page once it has loaded.', action.url);
  }
}
