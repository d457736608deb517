/** `bot-screen_wait`: waits a few seconds (for a page or program to settle) without touching the screen. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import { AgentTool } from './agentTool';

export class WaitTool extends AgentTool<'wait'> {
  static readonly id = 'bot-screen_wait';
  readonly kind = 'wait';

  invocationMessage(): string {
    return vscode.l10n.t('Waiting');
  }

  doneMessage(action: ActionOf<'wait'>): string {
    return vscode.l10n.t('Waited {0} seconds.', action.seconds);
  }
}
