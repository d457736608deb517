/**
 * The view modes in the title toolbars: Fit, 1:1 and Resize under a "View Mode" button in the
 * Screen view's title and in the editor panel's. Each toolbar has its own three commands, so a
 * pick reaches the viewer whose toolbar was used (a menu passes no argument that would say so);
 * the viewer's webview applies it as if its own button was pressed (webview/viewMode.ts).
 */
import type { Ctx } from '../ctx';
import type { ViewMode } from '../protocol';
import type { Command } from './table';

const MODES: readonly (readonly [suffix: string, mode: ViewMode])[] = [
  ['Fit', 'fit'],
  ['Actual', 'actual'],
  ['Resize', 'resize'],
];

/** `botScreen.viewMode<Mode>` for the Screen view, `botScreen.panelViewMode<Mode>` for the editor panel. */
export function viewModeCommands(ctx: Ctx): Command[] {
  return (['view', 'panel'] as const).flatMap((where) =>
    MODES.map(([suffix, mode]): Command => ({
      id: `botScreen.${where === 'view' ? 'viewMode' : 'panelViewMode'}${suffix}`,
      run: () => ctx.views.viewerIn(where)?.setViewMode(mode),
    })),
  );
}
