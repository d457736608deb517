/** `bot-screen_click`: clicks (or double-clicks) a mouse button at a point of the screen. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import type { Geometry } from '../../core/validate';
import { AgentTool, at, onScreen } from './agentTool';

export class ClickTool extends AgentTool<'click'> {
  static readonly id = 'bot-screen_click';
  readonly kind = 'click';

  invocationMessage(action: ActionOf<'click'> | undefined): string {
    return action ? vscode.l10n.t('Clicking at ({0}, {1}) on the Bot Screen', action.at.x, action.at.y) : vscode.l10n.t('Clicking on the Bot Screen');
  }

  doneMessage(action: ActionOf<'click'>, size: Geometry | undefined): string {
    return action.double
      ? vscode.l10n.t('Double-clicked the {0} button at {1}{2}.', action.button, at(action.at), onScreen(size))
      : vscode.l10n.t('Clicked the {0} button at {1}{2}.', action.button, at(action.at), onScreen(size));
  }
}
