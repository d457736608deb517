/** `bot-screen_drag`: drags with a mouse button held from one point of the screen to another. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import type { Geometry } from '../../core/validate';
import { AgentTool, at, onScreen } from './agentTool';

export class DragTool extends AgentTool<'drag'> {
  static readonly id = 'bot-screen_drag';
  readonly kind = 'drag';

  invocationMessage(): string {
    return vscode.l10n.t('Dragging on the Bot Screen');
  }

  doneMessage(action: ActionOf<'drag'>, size: Geometry | undefined): string {
    return vscode.l10n.t('Dragged with the {0} button from {1} to {2}{3}.', action.button, at(action.from), at(action.to), onScreen(size));
  }
}
