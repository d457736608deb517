/**
 * The host's side of a Screen viewer's screen options: the view mode setting and the labels of
 * the view mode buttons and the Send keys menu (webview/viewMode.ts, webview/sendKeys.ts),
 * and the keyboard mode the viewer's input gate applies. Putting the screen back after a resize is
 * core's (src/core/actions/screenSize.ts: ResizeRestore).
 */
import * as vscode from 'vscode';
import { PSEUDO_ENCODING_QEMU_EXTENDED_KEY_EVENT, type RfbInputGateOptions } from './core/rfbInputGate';
import type { HostToWebview, ViewMode } from './protocol';

const VIEW_MODES: readonly ViewMode[] = ['fit', 'actual', 'resize'];

/** The `options` message: the view mode setting (an unknown value means Fit) and the labels. */
export function screenOptionsMessage(): HostToWebview {
  const configured = vscode.workspace.getConfiguration('botScreen').get<string>('viewMode');
  const viewMode = VIEW_MODES.find((mode) => mode === configured) ?? 'fit';
  return {
    type: 'options',
    viewMode,
    strings: {
      viewMode: vscode.l10n.t('View mode'),
      viewFit: vscode.l10n.t('Fit'),
      viewFitTitle: vscode.l10n.t('Scale the screen to fit the view'),
      viewActual: vscode.l10n.t('1:1'),
      viewActualTitle: vscode.l10n.t('Actual size, one screen pixel per pixel, with scrollbars (sharp text)'),
      viewResize: vscode.l10n.t('Resize'),
      viewResizeTitle: vscode.l10n.t('Resize the screen to the view while you have control; it returns to its size when you hand back'),
      sendKeys: vscode.l10n.t('Send keys'),
      sendKeysTitle: vscode.l10n.t('Send keys that the browser, VS Code or the system would take for themselves'),
      sendKeysDisabled: vscode.l10n.t('Send keys: take control first'),
    },
  };
}

/** Which screen options a change of the configuration concerns. */
export function affectsScreenOptions(event: vscode.ConfigurationChangeEvent): { readonly viewMode: boolean; readonly keyboard: boolean } {
  return { viewMode: event.affectsConfiguration('botScreen.viewMode'), keyboard: event.affectsConfiguration('botScreen.keyboard.mode') };
}

/**
 * The input gate's options for `botScreen.keyboard.mode`. `keysym` (the default) sends what the
 * person's keyboard layout types (noVNC's keysyms; Xvnc finds or makes a key for each), so a
 * German `z`, `ü` or AltGr `@` arrive as typed; noVNC would otherwise send the physical key
 * (QEMU extended key events), which Xvnc reads with its own US layout. `scancode` keeps the
 * physical keys, for a sandbox whose own layout (setxkbmap) matches the keyboard.
 */
export function keyboardGateOptions(): RfbInputGateOptions {
  const mode = vscode.workspace.getConfiguration('botScreen').get<string>('keyboard.mode');
  return mode === 'scancode' ? {} : { neutralise: [PSEUDO_ENCODING_QEMU_EXTENDED_KEY_EVENT] };
}
