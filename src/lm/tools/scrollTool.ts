/** `bot-screen_scroll`: scrolls at a point of the screen. */
import * as vscode from 'vscode';
import type { ActionOf } from '../../core/actions/catalog';
import type { Geometry } from '../../core/validate';
import { AgentTool, at, onScreen } from './agentTool';

export class ScrollTool extends AgentTool<'scroll'> {
  static readonly id = 'bot-screen_scroll';
  readonly kind = 'scroll';

  invocationMessage(): string {
    return vscode.l10n.t('Scrolling on the Bot Screen');
  }

  doneMessage(action: ActionOf<'scroll'>, size: Geometry | undefined): string {
    return vscode.l10n.t('Scrolled {0} by {1} at {2}{3}.', action.direction, action.amount, at(action.at), onScreen(size));
  }
}
