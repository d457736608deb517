/**
 * What the Screen view offers for a status: its headline, detail and the action buttons, in
 * order. Free of `vscode` (the sentences come in as `StatusWords`, src/messages.ts supplies the
 * localised ones) so a plain Node test checks which actions each state and problem offers.
 */
import type { Placement } from './core/placement';
import type { Problem } from './core/problem';
import type { ScreenStatus } from './core/screen';
import { fixesFor, type Fix } from './fixes';
import type { ScreenState, ScreenStatusView, ViewAction } from './protocol';

/** The sentences a status view is made of. */
export interface StatusWords {
  problem(problem: Problem): string;
  state(state: ScreenState): string;
  headline(placement: Placement | undefined): string;
  imageSwitch(current: string, target: string): string;
}

export function statusView(status: ScreenStatus, inEditor: boolean, words: StatusWords): ScreenStatusView {
  const actions: ViewAction[] = [];
  const hostBinariesMissing = status.problem?.code === 'missingBinaries' && status.problem.onHost;
  switch (status.state) {
    case 'running':
      actions.push('stop');
      break;
    case 'starting':
    case 'stopping':
      break;
    case 'refused':
      actions.push(...(status.problem ? fixesFor(status.problem).map(viewAction) : []), 'showLogs');
      break;
    default:
      // The problem's fixes first; a blocker takes the place of Start when starting again
      // cannot help by itself.
      actions.push(...(status.problem ? fixesFor(status.problem).map(viewAction) : []));
      actions.push(hostBinariesMissing ? 'installHostDesktop' : 'start');
      if (status.problem) {
        actions.push('showLogs');
      }
  }
  if (!inEditor) {
    actions.push('openInEditor');
  }
  const details = status.problem ? [words.problem(status.problem)] : [];
  if (status.imageSwitch) {
    actions.unshift('switchImage', 'keepImage');
    details.push(words.imageSwitch(status.imageSwitch.current, status.imageSwitch.target));
  }
  return {
    state: status.state,
    stateLabel: words.state(status.state),
    headline: words.headline(status.placement),
    detail: details.join('\n\n'),
    actions: [...new Set(actions)],
  };
}

/** A fix as a button of the view: Retry is the view's Start. */
function viewAction(fix: Fix): ViewAction {
  return fix.kind === 'retry' ? 'start' : fix.kind;
}
