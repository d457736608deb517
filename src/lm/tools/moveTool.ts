/** `bot-screen_move`: moves the pointer to a point of the screen. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import type { Geometry } from '../../core/validate';
import { AgentTool, at, onScreen } from './agentTool';

export class MoveTool extends AgentTool<'move'> {
  static readonly id = 'bot-screen_move';
  readonly kind = 'move';

  invocationMessage(): string {
    return vscode.l10n.t('Moving the pointer on the Bot Screen');
  }

  doneMessage(action: ActionOf<'move'>, size: Geometry | undefined): string {
    return vscode.l10n.t('Moved the pointer to {0}{1}.', at(action.at), onScreen(size));
  }
}
